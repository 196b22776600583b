import type { HostRootResponse } from '@aks-flex-node/api';
import type { Logger } from '@aks-flex-node/log';
import type { MutationQueue } from './mutation-queue.js';

/** What `status` shows of the host. */
export interface HostSnapshot {
  hostRoot: HostRootResponse;
  activationInProgress: boolean;
}

/**
 * The host as `status` reports it. Every read looks at the host (the host
 * root described, the activation lock file probed), so a change made
 * outside the daemon (an offline tool, the Go releases' scripts, a lock gone
 * stale) shows in the next answer. Reads that arrive while a look is in
 * flight share it: its answer is no older than their request.
 */
export interface HostView {
  read(): Promise<HostSnapshot>;
}

/** What {@link createHostView} reads the host through; tests pass fakes. */
export interface HostViewSources {
  describeHostRoot(): Promise<HostRootResponse>;
  /** Whether the activation lock file is held (by anyone, this daemon included). */
  isLockHeld(): Promise<boolean>;
  /** The daemon's own mutation queue: its mutation in progress is known without the filesystem. */
  queue: Pick<MutationQueue, 'isBusy'>;
  log: Logger;
}

interface Seen {
  hostRoot: HostRootResponse;
  lockHeld: boolean;
}

/** Builds the daemon's view of the host for status. */
export function createHostView(sources: HostViewSources): HostView {
  let lastSeen: Seen | undefined;
  let inFlight: Promise<Seen> | undefined;

  const look = async (): Promise<Seen> => {
    try {
      const [hostRoot, lockHeld] = await Promise.all([
        sources.describeHostRoot(),
        sources.isLockHeld(),
      ]);
      lastSeen = { hostRoot, lockHeld };
      return lastSeen;
    } catch (error) {
      // A host that cannot be read now still has a daemon whose state an
      // operator needs: status shows what was seen last, and the log says why.
      if (lastSeen === undefined) throw error;
      sources.log.warn(
        { err: error },
        'could not look at the host for status; status shows what was seen before',
      );
      return lastSeen;
    }
  };

  return {
    read: async () => {
      inFlight ??= look().finally(() => {
        inFlight = undefined;
      });
      const seen = await inFlight;
      // This daemon's own lock is known without the filesystem; the file says
      // whether someone else holds it (and says held while this daemon does).
      return {
        hostRoot: seen.hostRoot,
        activationInProgress: sources.queue.isBusy() || seen.lockHeld,
      };
    },
  };
}
