import path from 'node:path';
import { exists } from '@aks-flex-node/fs';
import { isUnder } from '@aks-flex-node/hostroot';
import { managedBinaryDir, type HostPaths } from '@aks-flex-node/layout';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';

/**
 * Whether the agent still keeps files under the legacy root, so its units
 * must leave that root writable: a linked host's daemon runs from it, pass 2
 * of the move removes its files from there, and the start removes the seed
 * an install script left in its `bin`. A fresh or moved host gets units that
 * name nothing under it (issue 9: no unit names `/usr/local` after a move).
 */
export async function legacyRootInUse(
  paths: HostPaths,
  binaryPaths: AgentBinaryPaths,
): Promise<boolean> {
  // Either spelling of the legacy root: on some images it is itself a link.
  if (await isUnder(binaryPaths.current, paths.legacy)) return true;
  // The marker and staging directory: a move whose pass 2 has not removed the legacy files yet.
  const evidence = [
    path.join(paths.legacy, managedBinaryDir),
    paths.legacySeed,
    paths.movingMarker,
    paths.staging,
  ];
  for (const file of evidence) {
    if (await exists(file)) return true;
  }
  return false;
}
