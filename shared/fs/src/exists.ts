import { lstat } from 'node:fs/promises';
import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';

/**
 * Whether anything (a dangling link included: lstat) is at `target`. Only
 * ENOENT means absent; any other failure is a path that cannot be judged,
 * and throws rather than pass for absent.
 *
 * Throws HOST_ROOT_IO.
 */
export async function exists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', target, error);
  }
}
