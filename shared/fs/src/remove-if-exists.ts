import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { removePath } from './remove-path.js';

/**
 * Removes a file, a symlink (not its target) or an empty directory. Only
 * ENOENT counts as already gone: ENOTDIR (a file where a directory should be)
 * is an error, because the path does not mean what the caller thinks.
 */
export async function removeIfExists(target: string): Promise<void> {
  try {
    await removePath(target);
  } catch (error) {
    if (!isNotFound(error)) throw makeIoError('remove', target, error);
  }
}
