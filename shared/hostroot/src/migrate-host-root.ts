import { lstat } from 'node:fs/promises';
import { makeIoError, mkdirMode, removeIfExists, replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import { holdsAnyMarker } from './holds-any-marker.js';
import { parentOf, type HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';
import {
  refuseInstalledUnderBoth,
  refuseRootAlsoExists,
  refuseRootNotDirectory,
} from './refusals.js';

/**
 * Brings the host root in line with where the agent is installed (spec
 * hostroot §3.5), before any path is resolved. A legacy installation gets the
 * root linked to it; a dead link goes; a host installed under both roots is
 * refused. Every success is also a success when run again. Reset does not
 * call this, so reset still works on a host this refuses.
 */
export async function migrateHostRoot(
  paths: HostRootPaths,
  log: Logger,
  markers: readonly string[],
): Promise<void> {
  const state = await hostRootState(paths);
  switch (state) {
    case 'absent':
      return linkToLegacyIfInstalled(paths, log, markers);
    case 'linked':
      return removeDeadLink(paths, log, markers);
    case 'other':
      return refuseNonDirectory(paths);
    case 'moving':
      // An unfinished move has installations under both roots on purpose:
      // the legacy files stay until no unit names them.
      return;
    case 'installed':
      return refuseSecondInstallation(paths, markers);
  }
}

/**
 * Whether Migrate has nothing to do and nothing to refuse: the root is
 * installed and no installation is left under the legacy root. Reads only.
 */
export async function isHostRootSettled(
  paths: HostRootPaths,
  markers: readonly string[],
): Promise<boolean> {
  return (
    (await hostRootState(paths)) === 'installed' && !(await holdsAnyMarker(paths.legacy, markers))
  );
}

async function linkToLegacyIfInstalled(
  paths: HostRootPaths,
  log: Logger,
  markers: readonly string[],
): Promise<void> {
  if (!(await holdsAnyMarker(paths.legacy, markers))) return;
  // The parent is the host's: created 0755 only when missing, whatever the
  // umask; an existing one keeps its mode and its files.
  await mkdirMode(parentOf(paths), 0o755);
  // The link text is exactly the legacy path; that exact text is what makes
  // it "linked" rather than an operator's link.
  await replaceSymlinkAtomic(paths.root, paths.legacy);
  log.info(
    { root: paths.root, legacy: paths.legacy },
    'linked the host root to the existing installation',
  );
}

/**
 * An older agent's reset removes its files but never knew about this link.
 * Left in place it would put a fresh installation back under the legacy
 * root, which is read-only on some hosts.
 */
async function removeDeadLink(
  paths: HostRootPaths,
  log: Logger,
  markers: readonly string[],
): Promise<void> {
  if (await holdsAnyMarker(paths.legacy, markers)) return;
  log.info(
    { root: paths.root, legacy: paths.legacy },
    'removing the host root link: nothing is installed behind it',
  );
  await removeIfExists(paths.root);
}

/** An operator's link is kept; a file or fifo in the way is refused. */
async function refuseNonDirectory(paths: HostRootPaths): Promise<void> {
  let info;
  try {
    info = await lstat(paths.root);
  } catch (error) {
    // Gone since the state was read: nothing is in the way any more. Anything
    // else (EACCES, EIO) leaves the root unjudged, so it is not taken for gone.
    if (isNotFound(error)) return;
    throw makeIoError('inspect', paths.root, error);
  }
  if (!info.isSymbolicLink()) throw refuseRootNotDirectory(paths);
}

async function refuseSecondInstallation(
  paths: HostRootPaths,
  markers: readonly string[],
): Promise<void> {
  if (!(await holdsAnyMarker(paths.legacy, markers))) return;
  if (await holdsAnyMarker(paths.root, markers)) throw refuseInstalledUnderBoth(paths);
  throw refuseRootAlsoExists(paths);
}
