import path from 'node:path';
import { lstat, makeIoError } from '@aks-flex-node/fs';
import { errnoCode, isNotFound } from '@aks-flex-node/log';

/**
 * Whether any marker (the blue/green layout, shared/layout `hostRootMarkers`)
 * is present under `root`. lstat, so a dangling `current` link still means an
 * installation. A marker is absent when nothing is at its path, or a file
 * stands where one of its directories should be (nothing can be below it);
 * any other failure means the root cannot be judged and is thrown, never
 * taken for "not held". Markers are checked in order.
 *
 * Throws HOST_ROOT_IO.
 */
export async function holdsAnyMarker(root: string, markers: readonly string[]): Promise<boolean> {
  for (const marker of markers) {
    const target = path.join(root, marker);
    try {
      await lstat(target);
      return true;
    } catch (error) {
      if (isNotFound(error) || errnoCode(error) === 'ENOTDIR') continue;
      throw makeIoError('inspect', target, error);
    }
  }
  return false;
}
