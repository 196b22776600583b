import { rmdir, unlink } from 'node:fs/promises';
import { errnoCode } from '@aks-flex-node/log';

/**
 * Go's `os.Remove`: unlink, then rmdir if that failed. When both fail the
 * rmdir error wins unless it is ENOTDIR (then the path was no directory and
 * the unlink error says why), so a non-empty directory reports ENOTEMPTY.
 * Throws the raw errno error; callers decide which codes are fine.
 */
export async function removePath(target: string): Promise<void> {
  let unlinkError: unknown;
  try {
    await unlink(target);
    return;
  } catch (error) {
    unlinkError = error;
  }
  try {
    await rmdir(target);
  } catch (rmdirError) {
    throw errnoCode(rmdirError) === 'ENOTDIR' ? unlinkError : rmdirError;
  }
}
