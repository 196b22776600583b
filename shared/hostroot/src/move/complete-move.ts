import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { removeIfExists, removeOwned } from '@aks-flex-node/fs';
import type { Logger } from '@aks-flex-node/log';
import { isUnder } from '../at-or-under.js';
import { movingMarkerOf } from '../host-root-paths.js';
import { prepareHostRoot } from '../prepare-host-root.js';
import { resolveHostRoot } from '../resolve-host-root.js';
import type { MoveHost } from './move-host.js';
import type { HostRootMovePaths } from './move-paths.js';
import type { MoveSettings } from './move-settings.js';
import { removeLegacyLayout } from './remove-legacy-layout.js';
import { undoMove } from './undo-move.js';

/** Pass 1 ends by queueing the restart; pass 2 ends with the host moved. */
export type CompletedPass = 'restart-queued' | 'moved';

/**
 * Finishes a move whose copy is in place (state `moving`; spec hostroot
 * §4.3 completeMove). A daemon still running from the legacy root proves the
 * copy runs, points the units at it and queues its restart (pass 1). A
 * daemon running from anywhere else (the copy, after that restart) points
 * the units at the root again, then removes the legacy files (pass 2).
 * Throws what the host's effects throw, HOST_ROOT_IO, or the undo's errors.
 */
export async function completeMove(
  paths: HostRootMovePaths,
  log: Logger,
  host: MoveHost,
  settings: MoveSettings,
  self: string,
): Promise<CompletedPass> {
  // Before anything runs from the copy; a move interrupted after the rename
  // has not done it yet, and twice is harmless.
  await prepareHostRoot(paths, log, settings.subdirs, { relabel: host.relabel });
  failpoint(failpoints.moveRootPrepared);
  const runningFromLegacy = await isUnder(self, paths.legacy);
  if (runningFromLegacy) {
    // Before any unit names the copy: once one does, a daemon that cannot run
    // from it never starts again, and the recovery unit only acts on an
    // AgentUpgrade. A daemon already running from the copy has shown it runs.
    try {
      await host.verify(paths.root);
    } catch (error) {
      return undoMove(paths, log, host, error);
    }
    failpoint(failpoints.moveCopyVerified);
  }
  await host.rewriteUnits(await resolveHostRoot(paths));
  if (runningFromLegacy) {
    failpoint(failpoints.moveUnitsRewritten);
    log.info(
      { root: paths.root, legacy: paths.legacy },
      'restarting the daemon from the host root; it removes the files under the legacy root',
    );
    // Nothing under the legacy root goes while this daemon still runs from it.
    await host.queueRestart();
    failpoint(failpoints.moveRestartQueued);
    return 'restart-queued';
  }
  failpoint(failpoints.moveFinishUnitsRewritten);
  await removeLegacyFiles(paths, log, settings);
  return 'moved';
}

/** Pass 2's removals, in the order a crash can resume from. */
async function removeLegacyFiles(
  paths: HostRootMovePaths,
  log: Logger,
  settings: MoveSettings,
): Promise<void> {
  await removeLegacyLayout(paths.legacy, settings, log, {
    fileRemoved: () => {
      failpoint(failpoints.moveLegacyFileRemoved);
    },
    dirsRemoved: () => {
      failpoint(failpoints.moveLegacyDirsRemoved);
    },
    synced: () => {
      failpoint(failpoints.moveLegacySynced);
    },
  });
  // Only a linked host reads the record, and this one is no longer linked.
  await removeOwned(paths.hostRootAgentDigests);
  failpoint(failpoints.moveRecordRemoved);
  await removeIfExists(movingMarkerOf(paths));
  failpoint(failpoints.moveMarkerRemoved);
  log.info(
    { root: paths.root, legacy: paths.legacy },
    "moved the agent's files into the host root",
  );
}
