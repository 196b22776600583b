import path from 'node:path';
import { canonicalPath } from '@aks-flex-node/fs';
import { holdsAnyMarker } from './holds-any-marker.js';
import { parentOf, type HostRootPaths } from './host-root-paths.js';
import { hostRootState, type HostRootState } from './host-root-state.js';

/**
 * Where the host root will resolve once migrate has run, without changing
 * anything (spec hostroot §3.3). Preflight uses it to check the directories an
 * installation will use before any command touches the host.
 */
export async function plannedHostRoot(
  paths: HostRootPaths,
  markers: readonly string[],
): Promise<string> {
  let state: HostRootState;
  try {
    state = await hostRootState(paths);
  } catch {
    // Only a prediction: the same error stops migrate, which every command
    // that changes the host runs first, and is reported from there.
    return canonicalPath(paths.root);
  }
  const legacyInstalled = await holdsAnyMarker(paths.legacy, markers);
  if (state === 'absent' && legacyInstalled) return canonicalPath(paths.legacy);
  if (state === 'linked' && !legacyInstalled) {
    // migrate removes this dead link and a fresh install makes a real
    // directory; canonical(root) would resolve through the link instead.
    return path.join(await canonicalPath(parentOf(paths)), path.basename(paths.root));
  }
  return canonicalPath(paths.root);
}
