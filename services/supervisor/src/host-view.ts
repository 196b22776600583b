import type { HostRootResponse } from '@aks-flex-node/api';
import type { Logger } from '@aks-flex-node/log';
import type { MutationQueue } from './mutation-queue.js';
import { armWatches, type DirectoryWatcher, type WatchDirectory } from './host-view-watch.js';

/** What `status` shows of the host. */
export interface HostSnapshot {
  hostRoot: HostRootResponse;
  activationInProgress: boolean;
}

/**
 * The host as `status` reports it, kept by the daemon. It looks at the host
 * (the host root described, the activation lock file probed) only when the
 * host may have changed since its last look:
 * - this daemon changed it: every change runs in the mutation queue, so
 *   while a mutation runs each read looks, and one that ended marks the view
 *   stale;
 * - a file event in a directory whose entries the answer depends on (the
 *   host root's parents, the root, the legacy layout, the lock's directory):
 *   a Go release, an operator, the CLI run directly or a hook changed it;
 * - the last look found the lock file held: whose holder may have died,
 *   which no event announces (the lock goes stale by its age);
 * - a directory could not be watched: then every read looks, as without a
 *   view, until the watches can be set again.
 * No answer is kept by age: a read sees every change made before its request
 * arrived (see {@link HostView.read}).
 */
export interface HostView {
  read(): Promise<HostSnapshot>;
  /** Ends the watches; the view then looks at every read. */
  close(): void;
}

/** What {@link createHostView} reads the host through; tests pass fakes. */
export interface HostViewSources {
  describeHostRoot(): Promise<HostRootResponse>;
  /** Whether the activation lock file is held (by anyone, this daemon included). */
  isLockHeld(): Promise<boolean>;
  /** The daemon's own mutation queue: its mutation in progress is known without the filesystem. */
  queue: Pick<MutationQueue, 'isBusy' | 'mutationsEnded'>;
  /**
   * The directories whose entries (or themselves) decide the answer, and how
   * to watch one. Without it the view looks at every read.
   */
  watch?: { dirs: readonly string[]; watchDirectory: WatchDirectory };
  log: Logger;
}

interface Seen {
  hostRoot: HostRootResponse;
  lockHeld: boolean;
  /** The count of file events when the look started: a later event makes it stale. */
  changes: number;
  /** The queue's count of ended mutations when the look started. */
  mutationsEnded: number;
}

interface Look {
  changes: number;
  done: Promise<void>;
}

/** Builds the daemon's view of the host for status. */
export function createHostView(sources: HostViewSources): HostView {
  const { queue, log, watch } = sources;
  let seen: Seen | undefined;
  let inFlight: Look | undefined;
  // Counts the file events seen; each one also asks for the watches to be set
  // again, since the event may be a watched directory replaced or removed (its
  // watch then follows the old inode, or is gone).
  let changes = 0;
  let rearm = watch !== undefined;
  let watchers: DirectoryWatcher[] = [];
  let watching = false;
  let lostWatches = false;
  let closed = false;

  const onEvent = () => {
    changes += 1;
    rearm = true;
  };

  const setWatches = () => {
    if (watch === undefined || closed) return;
    rearm = false;
    for (const watcher of watchers) watcher.close();
    const armed = armWatches(watch.dirs, watch.watchDirectory, onEvent);
    watchers = armed.watchers;
    watching = armed.failure === undefined;
    if (armed.failure === undefined) {
      if (lostWatches) log.info('status follows the host by file events again');
      lostWatches = false;
      return;
    }
    // Without the watches a change by another process would go unseen: every
    // read looks instead, and each look tries the watches again. Logged once
    // per loss, not per read.
    rearm = true;
    if (!lostWatches) {
      log.warn(
        { err: armed.failure.error, path: armed.failure.dir },
        `cannot watch ${armed.failure.dir} for changes to the host; status looks at the host at every request until it can (if the error is ENOSPC, raise fs.inotify.max_user_watches)`,
      );
    }
    lostWatches = true;
  };

  const startLook = (): Look => {
    const startedAt = changes;
    const endedAt = queue.mutationsEnded();
    // The watches first, then the look: a change after the watches are set
    // raises an event, and one before them is in what the look reads.
    if (rearm) setWatches();
    const done = (async () => {
      try {
        const [hostRoot, lockHeld] = await Promise.all([
          sources.describeHostRoot(),
          sources.isLockHeld(),
        ]);
        seen = { hostRoot, lockHeld, changes: startedAt, mutationsEnded: endedAt };
      } catch (error) {
        // A host that cannot be read now still has a daemon whose state an
        // operator needs: status shows what was seen last (and the next read
        // looks again), and the log says why.
        if (seen === undefined) throw error;
        log.warn(
          { err: error },
          'could not look at the host for status; status shows what was seen before',
        );
      }
    })().finally(() => {
      inFlight = undefined;
    });
    return { changes: startedAt, done };
  };

  const mustLook = (): boolean =>
    seen === undefined ||
    seen.changes !== changes ||
    !watching ||
    seen.lockHeld ||
    queue.isBusy() ||
    seen.mutationsEnded !== queue.mutationsEnded();

  return {
    read: async () => {
      // One turn of the event loop first: a change another process finished
      // before sending this request queued its file event before the request
      // bytes, so by the end of this turn's poll the event has been taken in.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (mustLook()) {
        // A look in flight that started before an event this read knows of
        // cannot have seen its change: then the next look answers. Only those
        // events count, so a host that keeps changing cannot hold a read up.
        const known = changes;
        for (;;) {
          inFlight ??= startLook();
          const look = inFlight;
          await look.done;
          if (look.changes >= known) break;
        }
      }
      if (seen === undefined) throw new Error('the host view has no look to answer from');
      // This daemon's own lock is known without the filesystem; the file says
      // whether someone else holds it (and says held while this daemon does).
      return {
        hostRoot: seen.hostRoot,
        activationInProgress: queue.isBusy() || seen.lockHeld,
      };
    },
    close: () => {
      closed = true;
      watching = false;
      for (const watcher of watchers) watcher.close();
      watchers = [];
    },
  };
}
