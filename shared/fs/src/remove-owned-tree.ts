import { lstat, rm } from 'node:fs/promises';
import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';

/**
 * Removes a directory tree the agent owns (a machine's root filesystem, a
 * unit's drop-in directory), checking first that it is there, for the same
 * reason as {@link removeOwned}: on a read-only filesystem a missing path
 * fails with EROFS rather than ENOENT. Links inside are removed, never
 * followed; a link at `target` itself is removed, not its target. Returns
 * whether anything was there. Throws HOST_ROOT_IO naming the path.
 */
export async function removeOwnedTree(target: string): Promise<boolean> {
  try {
    await lstat(target);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', target, error);
  }
  try {
    await rm(target, { recursive: true, force: true });
  } catch (error) {
    throw makeIoError('remove', target, error);
  }
  return true;
}
