import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { removeIfExists } from './remove-if-exists.js';
import { targetOfTemporary } from './temporary-name.js';

/**
 * The temporary files and links this package's writers left in `dir` when
 * they were stopped between creating one and renaming it into place, but
 * only those made for a target `isTarget` accepts: an operator's file, even
 * one named like ours, is never listed unless its target is the product's.
 * A missing directory has none. Throws HOST_ROOT_IO naming the directory.
 */
export async function findTemporaryFiles(
  dir: string,
  isTarget: (name: string) => boolean,
): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isNotFound(error)) return [];
    throw makeIoError('list', dir, error);
  }
  const found: string[] = [];
  for (const name of names) {
    const target = targetOfTemporary(name);
    if (target === undefined || !isTarget(target)) continue;
    const file = path.join(dir, name);
    // Only what the writers make: a file or a link. A directory is nobody's temp.
    const info = await lstat(file).catch(() => undefined);
    if (info?.isFile() === true || info?.isSymbolicLink() === true) found.push(file);
  }
  return found;
}

/**
 * Removes what {@link findTemporaryFiles} finds. Returns the paths removed.
 * Throws HOST_ROOT_IO naming the directory or file (EROFS on a read-only one).
 */
export async function removeTemporaryFiles(
  dir: string,
  isTarget: (name: string) => boolean,
): Promise<string[]> {
  const found = await findTemporaryFiles(dir, isTarget);
  for (const file of found) await removeIfExists(file);
  return found;
}
