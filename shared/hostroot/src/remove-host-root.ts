import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError, removeEmptyDir, removeIfEmpty, removeIfExists } from '@aks-flex-node/fs';
import { agentOnlyDirs } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { movingMarkerOf, stagingOf, type HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';

/**
 * Reset's last step, after the agent's files are gone (spec hostroot §3.11):
 * removes the staging copy an unfinished move left, the migration link, or
 * the root directory once nothing but empty subdirectories is left in it.
 * An operator's link, a stray file and anything the agent did not install
 * are kept. The parent is the host's and is never touched.
 */
export async function removeHostRoot(paths: HostRootPaths, log: Logger): Promise<void> {
  const staging = stagingOf(paths);
  try {
    // force: absence is fine; a link at that name is unlinked, never followed.
    await rm(staging, { recursive: true, force: true });
  } catch (error) {
    throw makeIoError('remove', staging, error);
  }
  const state = await hostRootState(paths);
  switch (state) {
    case 'absent':
    case 'other':
      return;
    case 'linked':
      // Only the link goes; the legacy root and everything in it stay.
      log.info({ root: paths.root, legacy: paths.legacy }, 'removing the host root link');
      return removeIfExists(paths.root);
    case 'moving':
    case 'installed':
      return removeEmptyRoot(paths, log);
  }
}

async function removeEmptyRoot(paths: HostRootPaths, log: Logger): Promise<void> {
  // The marker alone must not keep an otherwise empty root.
  await removeIfExists(movingMarkerOf(paths));
  // Not in the Go original, whose layout was flat: AKS Flex Node's slots live
  // two levels down (`lib/aks-flex-node`), and an empty one would keep `lib`
  // and so the root. Deepest first, and only real directories (removeEmptyDir
  // leaves a link alone).
  for (const dir of deepestFirst(agentOnlyDirs()))
    await removeEmptyDir(path.join(paths.root, dir), log);
  let entries;
  try {
    entries = await readdir(paths.root, { withFileTypes: true });
  } catch (error) {
    throw makeIoError('read', paths.root, error);
  }
  // Immediate children only, and real directories only (a link to a
  // directory is not one): `lib/other/keep` keeps `lib`, and so the root.
  for (const entry of entries) {
    if (entry.isDirectory()) await removeIfEmpty(path.join(paths.root, entry.name));
  }
  await removeIfEmpty(paths.root);
  if ((await hostRootState(paths)) === 'absent') {
    log.info({ root: paths.root }, 'removed the host root');
  } else {
    log.info(
      { root: paths.root },
      'keeping the host root: it holds files the agent did not install',
    );
  }
}

/** Nested directories before their parents, keeping the given order among equals. */
function deepestFirst(dirs: readonly string[]): string[] {
  const depth = (dir: string): number => dir.split('/').length;
  return [...dirs].sort((a, b) => depth(b) - depth(a));
}
