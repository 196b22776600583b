import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { findSpaceShortfall } from '@aks-flex-node/fs';
import { errnoCode, type Logger } from '@aks-flex-node/log';

/**
 * Whether the root's parent filesystem has free space for twice the legacy
 * files (the copy, and as much again for everything else on it), judged by
 * the same check as an upgrade's writes (`findSpaceShortfall`); a parent not
 * created yet is judged where it will be. A file that cannot be measured, or
 * a file system that cannot be inspected, answers no: the move then copies
 * only once readiness allows, which is always safe.
 */
export async function hasRoomForSpeculativeCopy(
  parent: string,
  legacy: string,
  files: readonly string[],
  log: Logger,
): Promise<boolean> {
  try {
    let bytes = 0;
    for (const rel of files) {
      const info = await lstat(path.join(legacy, rel)).catch((error: unknown) => {
        if (errnoCode(error) === 'ENOENT') return undefined;
        throw error;
      });
      if (info?.isFile() === true) bytes += info.size;
    }
    const short = await findSpaceShortfall([
      { dir: parent, bytes: 2 * bytes, what: 'the copy and as much again' },
    ]);
    return short === undefined;
  } catch (error) {
    log.warn(
      { err: error, parent },
      'could not measure the free space for the copy; it is made once readiness allows',
    );
    return false;
  }
}
