import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { makeIoError } from './io-error.js';

/**
 * Makes the entries of `dir` durable (open it, fsync, close). A rename or a
 * new name is only on disk once its directory is synced; without this a crash
 * can bring back the old name after a reported success.
 */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw makeIoError('open', dir, error);
  }
  try {
    await handle.sync();
  } catch (error) {
    await handle.close();
    throw makeIoError('sync', dir, error);
  }
  try {
    await handle.close();
  } catch (error) {
    throw makeIoError('close', dir, error);
  }
}
