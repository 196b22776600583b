import { errnoCode } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { removePath } from './remove-path.js';

/** Some systems report a non-empty directory as EEXIST instead of ENOTEMPTY. */
const keptCodes = new Set(['ENOENT', 'ENOTEMPTY', 'EEXIST']);

/**
 * Removes a directory only when it is empty. A directory that still holds
 * anything, or is already gone, is success: whatever is left is not the
 * agent's to remove.
 */
export async function removeIfEmpty(dir: string): Promise<void> {
  try {
    await removePath(dir);
  } catch (error) {
    if (!keptCodes.has(errnoCode(error) ?? '')) throw makeIoError('remove', dir, error);
  }
}
