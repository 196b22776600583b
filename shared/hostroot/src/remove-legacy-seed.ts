import { lstat } from 'node:fs/promises';
import { makeIoError, removeIfExists } from '@aks-flex-node/fs';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import { legacySeedOf, type HostRootPaths } from './host-root-paths.js';

/**
 * Removes the plain binary install scripts seed at `<legacy>/bin/aks-flex-node`
 * for releases before the host root. Call it only once {@link isLegacyReleased}
 * is true: until then an agent may still run from the legacy root. A link at
 * that name is an earlier release's compatibility link or an operator's, and
 * is kept; a missing seed is fine. Returns whether it removed a file.
 */
export async function removeLegacySeed(paths: HostRootPaths, log: Logger): Promise<boolean> {
  const seed = legacySeedOf(paths);
  let info;
  try {
    info = await lstat(seed);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', seed, error);
  }
  if (!info.isFile()) return false;
  log.info({ path: seed }, 'removing the agent binary an install script left for earlier releases');
  await removeIfExists(seed);
  return true;
}
