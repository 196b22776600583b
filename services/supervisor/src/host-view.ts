import type { HostRootResponse } from '@aks-flex-node/api';
import type { Logger } from '@aks-flex-node/log';
import type { MutationQueue } from './mutation-queue.js';

/**
 * How old the kept view may be before a read starts a refresh in the
 * background (the read itself is answered from the kept view at once): a
 * client polling status sees a change made outside the daemon (an offline
 * tool, the Go releases' scripts, a lock gone stale) within about this long.
 */
export const hostViewMaxAgeMs = 2_000;

/**
 * How old the kept view may be before a read waits for the refresh instead:
 * after a quiet spell nobody polled, so the first read (an operator's one
 * `status`) pays one look at the filesystem rather than showing an old view.
 * Under load the view never gets this old, so no read under load waits.
 */
export const hostViewQuietMs = 10_000;

/** What `status` shows of the host, as the daemon last saw it. */
export interface HostSnapshot {
  hostRoot: HostRootResponse;
  activationInProgress: boolean;
}

/**
 * The host as `status` reports it, kept in memory instead of read from the
 * filesystem on each request. The daemon refreshes it after every change it
 * makes (each mutation through the queue, each step of its host-root move);
 * changes made outside the daemon are picked up by a refresh that reads
 * start when the view is older than {@link hostViewMaxAgeMs}. There is no
 * timer: an idle daemon wakes for nothing, and a view nobody reads needs no
 * refreshing. Neither inotify: the activation lock counts as released once
 * its mtime is stale, which no file event announces.
 */
export interface HostView {
  /** The view for a read: at once from memory unless it is older than {@link hostViewQuietMs}. */
  read(): HostSnapshot | Promise<HostSnapshot>;
  /** Looks at the host again now; after a change the daemon made. Never rejects: a failure keeps the last view and is logged. */
  refresh(): Promise<void>;
}

/** What {@link createHostView} reads the host through; tests pass fakes. */
export interface HostViewSources {
  describeHostRoot(): Promise<HostRootResponse>;
  /** Whether the activation lock file is held (by anyone, this daemon included). */
  isLockHeld(): Promise<boolean>;
  /** The daemon's own mutation queue: busy is known without the filesystem, and each mutation ends in a refresh. */
  queue: Pick<MutationQueue, 'isBusy' | 'onSettled'>;
  log: Logger;
  /** Milliseconds on a monotonic clock. */
  now(): number;
}

/** Builds the daemon's kept view of the host and subscribes it to the mutation queue. */
export function createHostView(sources: HostViewSources): HostView {
  let kept: { hostRoot: HostRootResponse; lockHeld: boolean } | undefined;
  let keptAt = -Infinity;
  let inFlight: Promise<void> | undefined;
  // The snapshot object is rebuilt only when something in it changed, so a
  // serializer can recognise the one it already validated.
  let snapshot: HostSnapshot | undefined;

  const look = async () => {
    const startedAt = sources.now();
    try {
      const [hostRoot, lockHeld] = await Promise.all([
        sources.describeHostRoot(),
        sources.isLockHeld(),
      ]);
      kept = { hostRoot, lockHeld };
      snapshot = undefined;
    } catch (error) {
      sources.log.warn(
        { err: error },
        'could not look at the host for status; status shows what was seen before',
      );
    } finally {
      // Also after a failure: a host that cannot be read is not re-read by every request.
      keptAt = startedAt;
    }
  };
  // One look at a time; a refresh asked for during a look waits for it, then looks again,
  // so a change the daemon just made is never hidden by a look that began before it.
  const refresh = (): Promise<void> => {
    const previous = inFlight ?? Promise.resolve();
    const next = previous.then(look);
    inFlight = next;
    void next.finally(() => {
      if (inFlight === next) inFlight = undefined;
    });
    return next;
  };
  const current = (): HostSnapshot => {
    if (kept === undefined) {
      throw new Error('the host view was read before the host was first looked at');
    }
    // This daemon's own lock is known without the filesystem; the file says whether
    // someone else holds it (and says held while this daemon does).
    const activationInProgress = sources.queue.isBusy() || kept.lockHeld;
    if (
      snapshot === undefined ||
      snapshot.activationInProgress !== activationInProgress ||
      snapshot.hostRoot !== kept.hostRoot
    ) {
      snapshot = { hostRoot: kept.hostRoot, activationInProgress };
    }
    return snapshot;
  };

  sources.queue.onSettled(refresh);
  return {
    read: () => {
      const age = sources.now() - keptAt;
      if (kept === undefined || age > hostViewQuietMs) {
        return (inFlight ?? refresh()).then(current);
      }
      if (age > hostViewMaxAgeMs && inFlight === undefined) void refresh();
      return current();
    },
    refresh,
  };
}
