import { rename } from 'node:fs/promises';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { makeIoError, removeIfExists, syncDirectory } from '@aks-flex-node/fs';
import type { Logger } from '@aks-flex-node/log';
import { parentOf, stagingOf, type HostRootPaths } from '../host-root-paths.js';
import { stageLegacyFiles } from './stage-legacy-files.js';

/**
 * Pass 1's copy and swap (spec hostroot §4.4 move): stage the legacy files,
 * then put the copy where the link was. Afterwards the state is `moving`.
 * Units still name the legacy root, whose files all stay. Throws HOST_ROOT_IO.
 */
export async function swapInCopy(
  paths: HostRootPaths,
  log: Logger,
  files: readonly string[],
): Promise<void> {
  await stageLegacyFiles(paths, files);
  await swapInStagedCopy(paths, log);
}

/**
 * The swap alone, for a copy {@link stageLegacyFiles} has made durable:
 * the link goes, the copy takes its place. Throws HOST_ROOT_IO.
 */
export async function swapInStagedCopy(paths: HostRootPaths, log: Logger): Promise<void> {
  // A directory cannot be renamed over a symlink, so the link goes first.
  // Meanwhile a concurrent Migrate may link the root again; the rename then
  // fails (ENOTDIR) and the next start begins again from the staging.
  await removeIfExists(paths.root);
  failpoint(failpoints.moveLinkRemoved);
  const staging = stagingOf(paths);
  try {
    await rename(staging, paths.root);
  } catch (error) {
    throw makeIoError('move', staging, error, { object: `to ${paths.root}` });
  }
  failpoint(failpoints.moveCopyRenamed);
  // The units are about to name the root: its entry must survive a crash first.
  await syncDirectory(parentOf(paths));
  failpoint(failpoints.moveRootSynced);
  log.info(
    { root: paths.root, legacy: paths.legacy },
    "copied the agent's files into the host root",
  );
}
