import { acquireActivationLock } from '@aks-flex-node/lock';
import { AgentError, type Logger } from '@aks-flex-node/log';

/** Runs host mutations one at a time, each under the activation lock. */
export interface MutationQueue {
  run<T>(purpose: string, work: () => Promise<T>): Promise<T>;
  /** Whether a mutation of this daemon is running now. */
  isBusy(): boolean;
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
  log: Logger;
  staleMs?: number;
}): MutationQueue {
  let running: string | undefined;
  return {
    isBusy: () => running !== undefined,
    run: async (purpose, work) => {
      if (running !== undefined) {
        throw new AgentError(
          'ACTIVATION_IN_PROGRESS',
          `activation in progress: ${running} is running, so ${purpose} cannot start now`,
          {
            hint: 'wait for it to finish (see `aks-flex-node status`), then try again',
          },
        );
      }
      running = purpose;
      try {
        const lock = await acquireActivationLock({
          lockPath: options.lockPath,
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
        running = undefined;
      }
    },
  };
}
