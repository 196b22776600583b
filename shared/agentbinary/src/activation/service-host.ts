import { realpath } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Systemctl } from '@aks-flex-node/systemd';

/**
 * The host effects of a direct activation's service steps: systemctl, which
 * binary a process executes, and the clock. Tests replace all of it.
 */
export interface ServiceHost {
  systemctl: Pick<Systemctl, 'unitState' | 'daemonReload' | 'resetFailed' | 'restart' | 'mainPid'>;
  /** The resolved binary a process executes (`/proc/<pid>/exe`). */
  processExecutable(pid: number): Promise<string>;
  /** Milliseconds on a monotonic-enough clock. */
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The real {@link ServiceHost} over a systemctl. */
export function createServiceHost(systemctl: ServiceHost['systemctl']): ServiceHost {
  return {
    systemctl,
    processExecutable: (pid) => realpath(`/proc/${pid}/exe`),
    now: () => performance.now(),
    sleep: async (ms, signal) => {
      await sleep(ms, undefined, { signal });
    },
  };
}
