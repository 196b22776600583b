import path from 'node:path';
import { isRegularExecutable } from '@aks-flex-node/fs';
import { binaryFile, type HostPaths } from '@aks-flex-node/layout';

/**
 * The agent binary reset keeps for a rejoin: the first of the host root's and
 * the legacy root's `bin/aks-flex-node` that runs (links followed), the same
 * order install.sh and uninstall.sh look in. Undefined when neither does.
 */
export async function findKeptBinary(paths: HostPaths): Promise<string | undefined> {
  for (const root of [paths.root, paths.legacy]) {
    const candidate = path.join(root, binaryFile);
    if (await isRegularExecutable(candidate)) return candidate;
  }
  return undefined;
}
