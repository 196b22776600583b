import { watch } from 'node:fs';
import path from 'node:path';
import { hostRootMarkers } from '@aks-flex-node/layout';
import { errnoCode } from '@aks-flex-node/log';

/** One watch the host view holds. */
export interface DirectoryWatcher {
  close(): void;
}

/**
 * Watches one directory; calls `onEvent` when an entry in it appears, goes
 * or is renamed, or when the directory itself goes. Throws when it cannot
 * be watched (ENOENT when nothing is there).
 */
export type WatchDirectory = (dir: string, onEvent: () => void) => DirectoryWatcher;

/**
 * The real {@link WatchDirectory}: fs.watch (inotify). Only `rename` events
 * count: what status shows depends on which entries exist and what they
 * are, which only a create, a delete or a rename changes; a slot's bytes
 * being written (`change`, once per write) would only make the view look
 * again for nothing. Not persistent, so a watch never holds the daemon up
 * at exit.
 */
export const watchDirectory: WatchDirectory = (dir, onEvent) => {
  const watcher = watch(dir, { persistent: false }, (event) => {
    if (event === 'rename') onEvent();
  });
  // An error ends the watch: taken as a change, so the view looks and sets it again.
  watcher.on('error', onEvent);
  return {
    close: () => {
      watcher.close();
    },
  };
};

/** What {@link armWatches} set, or the directory it could not watch (then nothing stays set). */
export interface ArmedWatches {
  watchers: DirectoryWatcher[];
  failure?: { dir: string; error: unknown };
}

/**
 * Sets a watch on each directory. One that does not exist (yet) is watched
 * through its nearest existing parent, whose event announces it when it
 * comes. Any other failure (EACCES, ENOSPC: no inotify watch left) closes
 * what was set and is returned, for the caller to fall back to reading.
 */
export function armWatches(
  dirs: readonly string[],
  watchOne: WatchDirectory,
  onEvent: () => void,
): ArmedWatches {
  const watchers: DirectoryWatcher[] = [];
  const armed = new Set<string>();
  for (const dir of dirs) {
    let at = dir;
    while (!armed.has(at)) {
      try {
        watchers.push(watchOne(at, onEvent));
        armed.add(at);
      } catch (error) {
        const code = errnoCode(error);
        const parent = path.dirname(at);
        if ((code === 'ENOENT' || code === 'ENOTDIR') && parent !== at) {
          at = parent;
          continue;
        }
        for (const watcher of watchers) watcher.close();
        return { watchers: [], failure: { dir: at, error } };
      }
    }
  }
  return { watchers };
}

/**
 * The directories whose entries decide what status shows of the host:
 * - every directory on the way to the host root, since a link or a replaced
 *   directory anywhere there changes where the root resolves, and the root's
 *   parent holds the root's own entry (absent, the link, the directory);
 * - the root itself, for its move marker (followed when it is the link);
 * - the legacy layout's directory, for its slots and pointers (the planned root);
 * - the activation lock's directory, for the lock file another process takes.
 */
export function hostViewDirs(paths: {
  root: string;
  legacy: string;
  activationLock: string;
}): string[] {
  const dirs: string[] = [];
  for (let at = path.dirname(paths.root); ; at = path.dirname(at)) {
    dirs.push(at);
    if (path.dirname(at) === at) break;
  }
  dirs.push(paths.root);
  for (const marker of hostRootMarkers()) dirs.push(path.dirname(path.join(paths.legacy, marker)));
  dirs.push(path.dirname(paths.activationLock));
  return [...new Set(dirs)];
}
