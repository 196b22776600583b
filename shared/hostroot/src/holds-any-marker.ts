import { lstat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Whether any marker (the blue/green layout, shared/layout `hostRootMarkers`)
 * is present under `root`. lstat, so a dangling `current` link still means an
 * installation. Any lstat error counts as "not held": a marker that cannot be
 * seen cannot be run from either. Markers are checked in order.
 */
export async function holdsAnyMarker(root: string, markers: readonly string[]): Promise<boolean> {
  for (const marker of markers) {
    try {
      await lstat(path.join(root, marker));
      return true;
    } catch {
      continue;
    }
  }
  return false;
}
