import { realpath } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCommand } from '@aks-flex-node/fs';
import { createSystemctl, type Systemctl, type SystemctlOptions } from '@aks-flex-node/systemd';

/**
 * The host effects the lifecycle depends on (systemd through systemctl, the
 * kernel's view of processes, the clocks); here, not in shared/systemd, since
 * only the lifecycle's packages above it use it as one, in one object so the daemon,
 * `start`, the direct activation and the upgrade guard use them the same way
 * and tests replace all of them at once (STYLE.md conventions 13).
 */
export interface Host {
  systemctl: Systemctl;
  /** The resolved path of this process's executable: what slots and units are compared with. */
  runningExecutable(): Promise<string>;
  /** The resolved binary a process executes (`/proc/<pid>/exe`). */
  processExecutable(pid: number): Promise<string>;
  /** Milliseconds on a monotonic clock: for deadlines and intervals, never recorded. */
  now(): number;
  /** The wall clock: for the times an operation records or reports. */
  wallClock(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real {@link Host}: systemctl through the one command runner, the kernel's view of processes. */
export function createHost(options: Omit<SystemctlOptions, 'run'>): Host {
  return {
    systemctl: createSystemctl({ run: runCommand, ...options }),
    runningExecutable: () => realpath(process.execPath),
    processExecutable: (pid) => realpath(`/proc/${pid}/exe`),
    now: () => performance.now(),
    wallClock: () => new Date(),
    sleep: async (ms, signal) => {
      await sleep(ms, undefined, signal === undefined ? {} : { signal });
    },
  };
}
