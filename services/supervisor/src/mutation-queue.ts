import { acquireActivationLock, retryWhileActivationBusy } from '@aks-flex-node/lock';
import { AgentError, type Logger } from '@aks-flex-node/log';

/** Runs host mutations one at a time, each under the activation lock. */
export interface MutationQueue {
  /** Runs `work` under the lock; refuses at once when busy. */
  run<T>(purpose: string, work: () => Promise<T>): Promise<T>;
  /**
   * Like run, but resolves as soon as the lock is taken and `admit` (when
   * given) passed under it, with what `admit` returned and the work's
   * completion as `done`: an API call answers "accepted" only once its
   * mutation holds the lock and was admitted, and a refusal (busy, or by
   * `admit`) still comes back at once. The lock is held from `admit` through
   * `work`, so what `admit` checked still holds when the work starts.
   */
  start<T, A = void>(
    purpose: string,
    work: (admitted: A) => Promise<T>,
    admit?: () => Promise<A>,
  ): Promise<{ admitted: A; done: Promise<T> }>;
  /**
   * Like run, but waits (up to `timeoutMs`, a minute unless given) for a busy
   * lock; for work that must happen, such as judging at start. Aborting
   * `signal` ends the wait with the refusal at once.
   */
  runWhenFree<T>(
    purpose: string,
    work: () => Promise<T>,
    options?: { timeoutMs?: number; signal?: AbortSignal | undefined },
  ): Promise<T>;
  /** Whether a mutation of this daemon is running now. */
  isBusy(): boolean;
  /**
   * How many mutations have ended (done, failed, or refused by the lock). Every change
   * this daemon makes to the host runs here, so a reader that kept something
   * it saw of the host knows it may be out of date when this moved.
   */
  mutationsEnded(): number;
}

/**
 * Builds the daemon's mutation queue. A second mutation while one runs is
 * refused at once with ACTIVATION_IN_PROGRESS rather than queued: a caller
 * that waited could act on a layout the first mutation has since changed.
 * The activation lock also refuses when another process (a one-shot
 * recovery, an offline reset) holds it.
 */
export function createMutationQueue(options: {
  lockPath: string;
  goLockPath: string;
  log: Logger;
  staleMs?: number;
}): MutationQueue {
  let running: string | undefined;
  let ended = 0;
  const run = async <T>(purpose: string, work: () => Promise<T>): Promise<T> => {
    if (running !== undefined) {
      throw new AgentError(
        'ACTIVATION_IN_PROGRESS',
        `${purpose} cannot start now: ${running} is running and holds the activation lock`,
        { hint: 'wait for it to finish (see `aks-flex-node status`), then try again' },
      );
    }
    running = purpose;
    try {
      const lock = await acquireActivationLock({
        lockPath: options.lockPath,
        goLockPath: options.goLockPath,
        log: options.log,
        purpose,
        ...(options.staleMs === undefined ? {} : { staleMs: options.staleMs }),
      });
      try {
        return await work();
      } finally {
        await lock.release();
      }
    } finally {
      // Counted before `running` clears: a reader never sees the queue idle
      // with the count not yet moved.
      ended += 1;
      running = undefined;
    }
  };
  return {
    isBusy: () => running !== undefined,
    mutationsEnded: () => ended,
    run,
    start: async <T, A = void>(
      purpose: string,
      work: (admitted: A) => Promise<T>,
      admit?: () => Promise<A>,
    ) => {
      let markAdmitted: (admitted: A) => void = () => undefined;
      const admission = new Promise<A>((resolve) => (markAdmitted = resolve));
      const done = run(purpose, async () => {
        const admitted = admit === undefined ? (undefined as A) : await admit();
        markAdmitted(admitted);
        return work(admitted);
      });
      // Whichever comes first: admitted under the lock, or the refusal.
      const admitted = await Promise.race([admission, done.then(() => admission)]);
      return { admitted, done };
    },
    runWhenFree: (purpose, work, { timeoutMs = 60_000, signal } = {}) =>
      retryWhileActivationBusy(() => run(purpose, work), {
        log: options.log,
        purpose,
        timeoutMs,
        intervalMs: 1_000,
        waitForGoRelease: true,
        ...(signal === undefined ? {} : { signal }),
      }),
  };
}
