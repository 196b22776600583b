import { rm } from 'node:fs/promises';
import path from 'node:path';
import { isRegularExecutable, makeIoError, removeOwned } from '@aks-flex-node/fs';
import { hostRootState, removeHostRoot, removeLegacyLayout } from '@aks-flex-node/hostroot';
import {
  agentOnlyDirs,
  binaryFile,
  hostLayoutFiles,
  movingMarkerName,
  type HostPaths,
} from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';

/**
 * Removes what an unfinished move left (spec daemon 8.4, "also remove the
 * staging copy and the marker"): with no units left, no next start would
 * finish the move, and a later install would find a half-moved host. The
 * staging copy always goes. A root holding the marker is only copies while
 * the legacy root still has a binary that runs, so the copies go and the
 * host is left legacy-installed; otherwise the copy is the only one (pass 2
 * had started removing the legacy files), so pass 2's removals are finished
 * and the marker goes, leaving it installed. Either way one root holds the
 * whole agent and the other none of it. The root directory, a link, an
 * operator's link and anything else in either root are kept.
 */
export async function settleUnfinishedMove(paths: HostPaths, log: Logger): Promise<string[]> {
  const removed: string[] = [];
  try {
    // force: absence is fine; a link at that name is unlinked, never followed.
    await rm(paths.staging, { recursive: true, force: true });
  } catch (error) {
    throw makeIoError('remove', paths.staging, error);
  }
  if ((await hostRootState(paths)) !== 'moving') return removed;
  const marker = path.join(paths.root, movingMarkerName);
  if (await isRegularExecutable(path.join(paths.legacy, binaryFile))) {
    log.info(
      { root: paths.root, legacy: paths.legacy },
      'removing the copies of an unfinished move; the legacy root keeps the agent',
    );
    for (const file of hostLayoutFiles()) await removeOwned(path.join(paths.root, file));
    // Removes the marker and the directories the copies leave empty.
    await removeHostRoot(paths, log);
  } else {
    log.warn(
      { root: paths.root, legacy: paths.legacy },
      'the legacy root has no agent binary left; keeping the moved copy and finishing the removal under the legacy root',
    );
    // What pass 2 had left: left there, the next daemon would find the agent
    // installed under both roots and refuse to start, so a rejoin would fail.
    removed.push(
      ...(await removeLegacyLayout(
        paths.legacy,
        { files: hostLayoutFiles(), dirs: agentOnlyDirs() },
        log,
      )),
    );
    await removeOwned(marker);
  }
  removed.push(marker);
  return removed;
}
