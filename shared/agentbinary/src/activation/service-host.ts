import type { Host } from '../host.js';

/**
 * The part of the {@link Host} a direct activation's service steps use:
 * systemctl, which binary a process executes, and the clock. Narrow, so a
 * test fake answers only these.
 */
export interface ServiceHost extends Pick<Host, 'processExecutable' | 'now'> {
  systemctl: Pick<
    Host['systemctl'],
    'unitState' | 'daemonReload' | 'resetFailed' | 'restart' | 'mainPid'
  >;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}
