import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { pollUntil } from '@aks-flex-node/fs';
import { AgentError, isNotFound, isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import { tryFlock } from './flock.js';
import { heldLockRefusal } from './held-lock-refusal.js';
import { prepareRunDirectory } from './root-only.js';
import type { ActivationLockOptions } from './activation-lock-options.js';
import { takeLockfile } from './take-lockfile.js';

/** A held activation lock. `release` is idempotent. */
export interface ActivationLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes the activation lock without waiting: the lockfile, then the Go
 * releases' flock. Upgrades, the host-root move, reset and offline recovery
 * all take it, so they exclude one another and the Go releases; a held lock
 * is an immediate ACTIVATION_IN_PROGRESS refusal, never a hang.
 *
 * Throws ACTIVATION_IN_PROGRESS when another process holds it, HOST_ROOT_IO
 * when the lock's directory cannot be created.
 */
export async function acquireActivationLock(
  options: ActivationLockOptions,
): Promise<ActivationLock> {
  const dir = path.dirname(options.lockPath);
  // The run directory is root's: 0750 keeps other users from the socket and the locks beside it.
  await prepareRunDirectory(dir);
  const releaseLock = await takeLockfile(options);
  // The Go releases' flock comes second. Taken first, a holder of ours could
  // sit on it while it waits out a stale lockfile; second, a flock found held
  // while we hold the lockfile belongs to no holder of ours, so it is a Go
  // release or script at work and we refuse at once.
  const goLock = await tryFlock(options.goLockPath).catch(async (error: unknown) => {
    await releaseLock();
    throw error;
  });
  if (goLock === undefined) {
    await releaseLock();
    // Whoever holds it is named: the Go releases, their scripts, our install
    // scripts and an operator's flock(1) all take it, so none is guessed.
    const busy = await heldLockRefusal({
      code: 'ACTIVATION_IN_PROGRESS',
      lockPath: options.goLockPath,
      lead: `${options.purpose} cannot start now`,
      hint: 'wait for that process to finish, then try again',
    });
    flockRefusals.add(busy);
    throw busy;
  }
  options.log.debug(
    { path: options.lockPath, goLock: options.goLockPath, purpose: options.purpose },
    'took the activation lock',
  );
  let released = false;
  return {
    path: options.lockPath,
    release: async () => {
      if (released) return;
      released = true;
      // The reverse order: the flock goes first, so whoever takes the lockfile
      // next finds the flock free unless a Go release holds it.
      await goLock.release();
      await releaseLock();
      options.log.debug({ path: options.lockPath }, 'released the activation lock');
    },
  };
}

/** Refusals because another process holds the Go releases' flock; see {@link retryWhileActivationBusy}. */
const flockRefusals = new WeakSet<Error>();

/**
 * Runs `work` while holding the activation lock and releases it afterwards,
 * whether `work` succeeded or threw.
 */
export async function withActivationLock<T>(
  options: ActivationLockOptions,
  work: () => Promise<T>,
): Promise<T> {
  const lock = await acquireActivationLock(options);
  try {
    return await work();
  } finally {
    await lock.release();
  }
}

/** Whether some process holds the activation lock now. Never waits and never takes it. */
export async function isActivationLockHeld(lockPath: string, staleMs = 10_000): Promise<boolean> {
  try {
    return await lockfile.check(path.dirname(lockPath), {
      lockfilePath: lockPath,
      realpath: false,
      stale: staleMs,
    });
  } catch (error) {
    if (isNotFound(error)) return false;
    throw new AgentError('HOST_ROOT_IO', `inspect ${lockPath}: ${messageOf(error)}`, {
      path: lockPath,
      cause: error,
    });
  }
}

/** Options for {@link retryWhileActivationBusy}. */
export interface RetryWhileBusyOptions {
  log: Logger;
  purpose: string;
  /** How long to keep trying before the ACTIVATION_IN_PROGRESS refusal stands. */
  timeoutMs: number;
  intervalMs: number;
  /**
   * Wait for a Go release's flock too, instead of refusing at once. Only for
   * work nobody else will do if it gives up (judging at daemon start): the
   * Go releases' scripts hold their flock for seconds, and a daemon that gave
   * up would leave the signal pending until its next start.
   */
  waitForGoRelease?: boolean;
  /**
   * Ends the waiting when aborted: the last refusal is thrown at once. The
   * daemon aborts it when told to stop, since its shutdown waits for the
   * start sequence, and a judgement waiting out a busy lock would otherwise
   * hold the stop (and a reset that stops the daemon first) for a minute.
   */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` again while it is refused with ACTIVATION_IN_PROGRESS, up to
 * `timeoutMs`. Only for work that must happen (judging at start, recovery,
 * the upgrade guard): a lock a killed holder left is taken over once stale,
 * and giving up before then could leave the host on a broken candidate.
 * Every other error, and the refusal after the deadline, is thrown.
 */
export async function retryWhileActivationBusy<T>(
  attempt: () => Promise<T>,
  options: RetryWhileBusyOptions,
): Promise<T> {
  let refusal: unknown;
  const done = await pollUntil(
    async () => {
      try {
        return { value: await attempt() };
      } catch (error) {
        if (!isAgentError(error, 'ACTIVATION_IN_PROGRESS')) throw error;
        // A flock is freed the moment its holder dies, so it is never stale:
        // its holder is at work, and waiting would only delay the refusal.
        if (flockRefusals.has(error) && options.waitForGoRelease !== true) throw error;
        refusal = error;
        return undefined;
      }
    },
    {
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs,
      timedOut: () => {
        throw refusal;
      },
      // Announced as it waits, so the refusal that stands is not logged as a retry.
      clock: {
        now: () => performance.now(),
        sleep: async (ms) => {
          options.log.info(
            { purpose: options.purpose },
            'the activation lock is busy; trying again',
          );
          try {
            await sleep(
              ms,
              undefined,
              options.signal === undefined ? {} : { signal: options.signal },
            );
          } catch (error) {
            if (options.signal?.aborted === true) throw refusal;
            throw error;
          }
        },
      },
    },
  );
  return done.value;
}
