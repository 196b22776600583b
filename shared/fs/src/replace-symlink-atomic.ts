import { rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { syncDirectory } from './sync-directory.js';
import { temporaryPathFor } from './temporary-name.js';

/**
 * Makes `linkPath` a symlink whose text is exactly `target`, replacing an
 * existing file or link atomically (renameio style). Two processes doing the
 * same each leave an identical link. An existing directory is refused by the
 * rename, on purpose: a directory at the name is never the agent's to replace.
 */
export async function replaceSymlinkAtomic(linkPath: string, target: string): Promise<void> {
  const dir = path.dirname(linkPath);
  try {
    await symlink(target, linkPath);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') {
      throw makeIoError('link', linkPath, error, { object: `to ${target}` });
    }
    await renameNewLinkOver(linkPath, target);
  }
  await syncDirectory(dir);
}

/**
 * A symlink cannot be overwritten in place, so the new one is made under a
 * temporary name beside it (same directory, same filesystem) and renamed over.
 */
async function renameNewLinkOver(linkPath: string, target: string): Promise<void> {
  const temp = temporaryPathFor(linkPath);
  try {
    await symlink(target, temp);
    await rename(temp, linkPath);
  } catch (error) {
    // Best effort: the link or rename error is the one to report, and a
    // leftover has a dot-name nothing looks up.
    await rm(temp, { force: true }).catch(() => undefined);
    throw makeIoError('link', linkPath, error, { object: `to ${target}` });
  }
}
