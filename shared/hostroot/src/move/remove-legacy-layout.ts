import path from 'node:path';
import {
  exists,
  removeEmptyDir,
  removeIfExists,
  removeTemporaryFiles,
  syncFilesystem,
} from '@aks-flex-node/fs';
import { layoutFilePlaces } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';

/** The agent's files and the directories that hold only them, relative to a root. */
export interface LegacyLayout {
  readonly files: readonly string[];
  readonly dirs: readonly string[];
}

/**
 * Called after each step of {@link removeLegacyLayout}: the move arms its
 * failpoints there, so a crash test can stop it between any two removals.
 */
export interface LegacyRemovalSteps {
  fileRemoved?: () => void;
  dirsRemoved?: () => void;
  synced?: () => void;
}

/**
 * Removes the layout under the legacy root once the host root holds the
 * agent (spec hostroot 4.3, pass 2), in the order a crash can resume from:
 * each file (one an earlier attempt removed is fine), then the temporary
 * files a stopped write left beside them, then the directories left empty,
 * deepest first (one holding anything else is kept and logged), then a sync
 * of the legacy filesystem. The caller removes the `.moving`
 * marker only after this returns: otherwise a crash could keep the marker's
 * removal (on the root's filesystem) and lose these, and the legacy files
 * would come back beside an installed root, which Migrate refuses. Both the
 * move's pass 2 and reset, finishing a pass 2 that stopped, run this.
 * Returns the files that were there. Throws HOST_ROOT_IO.
 */
export async function removeLegacyLayout(
  legacy: string,
  layout: LegacyLayout,
  log: Logger,
  steps: LegacyRemovalSteps = {},
): Promise<string[]> {
  const removed: string[] = [];
  for (const rel of layout.files) {
    const target = path.join(legacy, rel);
    // Checked first: on a read-only filesystem unlinking a missing path fails
    // with EROFS, not ENOENT (what removeOwned checks, done here once).
    if (await exists(target)) {
      await removeIfExists(target);
      removed.push(target);
    }
    steps.fileRemoved?.();
  }
  // A write stopped by a crash (the seed, the helper, a link) can have left
  // its temporary copy beside a layout file. Before the directories, which
  // it would keep from being removed, and before the sync: once the move
  // ends, the units no longer name the legacy root, so nothing of ours could
  // remove it there any more.
  for (const place of layoutFilePlaces(legacy, layout.files)) {
    for (const temp of await removeTemporaryFiles(place.dir, place.isProductFile)) {
      log.info({ path: temp }, 'removed a temporary file a stopped write left behind');
    }
  }
  for (const rel of deepestFirst(layout.dirs)) {
    await removeEmptyDir(path.join(legacy, rel), log);
  }
  steps.dirsRemoved?.();
  await syncFilesystem(legacy);
  steps.synced?.();
  return removed;
}

/** Nested directories before their parents; equal depths keep their order (a stable sort). */
function deepestFirst(dirs: readonly string[]): string[] {
  const depth = (dir: string): number => path.normalize(dir).split('/').length;
  return [...dirs].sort((a, b) => depth(b) - depth(a));
}
