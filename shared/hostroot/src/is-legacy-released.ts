import { lstat, makeIoError, realpath, stat } from '@aks-flex-node/fs';
import { isAtOrUnder } from './at-or-under.js';
import type { HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';

/**
 * Whether nothing an agent runs is under the legacy root any more (spec
 * hostroot §3.7). Until then files there may be in use, even ones the install
 * scripts left for older releases, so nothing there is removed. Once it is
 * true the seeded binary should go, or an older release would adopt it after
 * an AgentUpgrade back to that release.
 */
export async function isLegacyReleased(paths: HostRootPaths): Promise<boolean> {
  const state = await hostRootState(paths);
  switch (state) {
    case 'installed':
      return true;
    case 'absent':
    case 'linked':
    case 'moving':
      return false;
    case 'other':
      return leadsOutsideLegacy(paths);
  }
}

/**
 * An operator's link at the root releases the legacy root only when it leads
 * to a directory outside it. A file at the root, a dangling link or a link
 * to a file releases nothing: the agent cannot be installed there.
 */
async function leadsOutsideLegacy(paths: HostRootPaths): Promise<boolean> {
  let info;
  try {
    info = await lstat(paths.root);
  } catch (error) {
    throw makeIoError('inspect', paths.root, error);
  }
  if (!info.isSymbolicLink()) return false;
  const resolved = await resolveDirectory(paths.root);
  if (resolved === undefined) return false;
  return !(await isAtOrUnder(resolved, paths.legacy));
}

/** A link that does not resolve to a directory (dangling, a loop, a file) is not an error here. */
async function resolveDirectory(link: string): Promise<string | undefined> {
  try {
    const resolved = await realpath(link);
    return (await stat(resolved)).isDirectory() ? resolved : undefined;
  } catch {
    return undefined;
  }
}
