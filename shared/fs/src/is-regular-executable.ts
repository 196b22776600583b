import { stat } from 'node:fs/promises';
import { errnoCode } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';

/**
 * Whether a path (links followed) is a regular file with an execute bit.
 * Absent (or under something that is not a directory) is false; any other
 * failure is a path that cannot be judged, and throws rather than pass for
 * "not an executable", which would let a caller remove or replace it.
 *
 * Throws HOST_ROOT_IO.
 */
export async function isRegularExecutable(file: string): Promise<boolean> {
  try {
    const info = await stat(file);
    return info.isFile() && (info.mode & 0o111) !== 0;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return false;
    throw makeIoError('inspect', file, error);
  }
}
