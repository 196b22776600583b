import { lstat, makeIoError, readlink } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';
import { movingMarkerOf, type HostRootPaths } from './host-root-paths.js';

/**
 * What is at the host root (spec hostroot §2):
 * - `absent`: nothing; a fresh host, or one only an older agent installed, under the legacy root;
 * - `linked`: the link migrate makes, whose text is exactly the legacy root;
 * - `moving`: a real directory whose move from the legacy root is unfinished;
 * - `installed`: a real directory holding the installation (an empty one too);
 * - `other`: an operator's link, a dangling link, or a non-directory in the way.
 */
export type HostRootState = 'absent' | 'linked' | 'moving' | 'installed' | 'other';

/** Every state, in the order the spec lists them, for exhaustive tables. */
export const hostRootStates: readonly HostRootState[] = [
  'absent',
  'linked',
  'moving',
  'installed',
  'other',
];

/**
 * Decides the host root's state. This is the only place that does: every
 * other function switches over its answer. Nothing here follows a link.
 */
export async function hostRootState(paths: HostRootPaths): Promise<HostRootState> {
  let info;
  try {
    info = await lstat(paths.root);
  } catch (error) {
    // ENOENT only: ENOTDIR or EACCES mean the root cannot be judged, not that it is absent.
    if (isNotFound(error)) return 'absent';
    throw makeIoError('inspect', paths.root, error);
  }
  if (info.isSymbolicLink())
    return (await readLinkText(paths.root)) === paths.legacy ? 'linked' : 'other';
  if (!info.isDirectory()) return 'other';
  return (await isMoving(paths)) ? 'moving' : 'installed';
}

/**
 * The raw text is compared, not a resolved path: only the exact link migrate
 * makes is the agent's. `/usr/local/`, a relative spelling or a link into the
 * legacy root are an operator's, and are kept.
 */
async function readLinkText(root: string): Promise<string> {
  try {
    return await readlink(root);
  } catch (error) {
    throw makeIoError('read', root, error);
  }
}

/** lstat, so a dangling link named `.moving` still marks the move unfinished. */
async function isMoving(paths: HostRootPaths): Promise<boolean> {
  const marker = movingMarkerOf(paths);
  try {
    await lstat(marker);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', marker, error);
  }
}
