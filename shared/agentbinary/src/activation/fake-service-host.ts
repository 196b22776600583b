/**
 * A fake {@link ServiceHost} for the direct-activation service tests: a
 * systemctl that records its calls and answers from a script, process
 * binaries from a function of the clock, and a clock that only the fake's
 * sleep moves.
 */
import type { ServiceHost } from './service-host.js';

/** How the fake host answers; each field may throw to fail that call. */
export interface FakeHostScript {
  loadState?: string;
  activeState?: string;
  /** The main PID at a time (ms since the fake clock started). */
  mainPid?: (at: number) => number;
  /** The binary a PID executes at a time. */
  executable?: (pid: number, at: number) => string;
  restart?: () => Promise<void>;
  resetFailed?: () => Promise<void>;
}

/** The fake and what it saw. */
export interface FakeHost {
  host: ServiceHost;
  calls: string[];
  /** The fake clock's reading. */
  elapsed(): number;
}

/** Builds the fake; the clock starts at 0 and moves only in sleep. */
export function fakeServiceHost(script: FakeHostScript = {}): FakeHost {
  const calls: string[] = [];
  let now = 0;
  const host: ServiceHost = {
    systemctl: {
      unitState: (unit) => {
        calls.push(`show ${unit}`);
        return Promise.resolve({
          loadState: script.loadState ?? 'loaded',
          activeState: script.activeState ?? 'active',
          subState: 'running',
        });
      },
      daemonReload: () => {
        calls.push('daemon-reload');
        return Promise.resolve();
      },
      resetFailed: async (unit) => {
        calls.push(`reset-failed ${unit}`);
        await script.resetFailed?.();
      },
      restart: async (unit) => {
        calls.push(`restart ${unit}`);
        await script.restart?.();
      },
      mainPid: () => Promise.resolve(script.mainPid?.(now) ?? 0),
    },
    processExecutable: (pid) => Promise.resolve(script.executable?.(pid, now) ?? '/unknown'),
    now: () => now,
    sleep: (ms, signal) => {
      signal.throwIfAborted();
      now += ms;
      return Promise.resolve();
    },
  };
  return { host, calls, elapsed: () => now };
}
