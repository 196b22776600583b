import { lstat } from 'node:fs/promises';
import { isNotFound } from '@aks-flex-node/log';
import { removeIfExists } from './remove-if-exists.js';

/**
 * Removes a file the agent owns, checking first that it is there. The check is
 * required, not an optimisation: on a read-only filesystem (`/usr` on some
 * hosts) unlinking a missing path fails with EROFS rather than ENOENT.
 */
export async function removeOwned(target: string): Promise<void> {
  try {
    await lstat(target);
  } catch (error) {
    // Other lstat errors fall through: the removal reports them with its verb.
    if (isNotFound(error)) return;
  }
  await removeIfExists(target);
}
