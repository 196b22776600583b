import { lstat, readdir } from 'node:fs/promises';
import type { Logger } from '@aks-flex-node/log';
import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { removeIfExists } from './remove-if-exists.js';

/**
 * Removes a directory the agent created once nothing is left in it. A link
 * at the name is an operator's and is left alone, and so is a directory
 * holding anything: those files are not the agent's. Both are success.
 */
export async function removeEmptyDir(dir: string, log: Logger): Promise<void> {
  let info;
  try {
    info = await lstat(dir);
  } catch (error) {
    if (isNotFound(error)) return;
    throw makeIoError('inspect', dir, error);
  }
  if (!info.isDirectory()) return;
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    throw makeIoError('read', dir, error);
  }
  if (entries.length > 0) {
    log.info(
      { path: dir, entries: entries.length },
      'keeping a directory that holds files the agent did not install',
    );
    return;
  }
  await removeIfExists(dir);
}
