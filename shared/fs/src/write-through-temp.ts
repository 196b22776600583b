import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isAgentError } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { syncDirectory } from './sync-directory.js';
import { temporaryPathFor } from './temporary-name.js';

/**
 * Writes `target` through a temporary file in the same directory: create it
 * exclusively, let `fill` write the content, set `mode` exactly, fsync, rename
 * over `target`, fsync the directory. Readers see the old file or the whole
 * new one, never a part. The temp file is removed when any step fails.
 */
export async function writeThroughTemp(
  target: string,
  mode: number,
  fill: (handle: FileHandle) => Promise<void>,
): Promise<void> {
  const dir = path.dirname(target);
  // Beside the target (see temporaryPathFor); a crash leaves it for the start sweep.
  const temp = temporaryPathFor(target);
  try {
    await fillTemp(temp, mode, fill);
    await rename(temp, target);
  } catch (error) {
    await removeTemp(temp);
    throw isAgentError(error) ? error : makeIoError('write', target, error);
  }
  await syncDirectory(dir);
}

async function fillTemp(
  temp: string,
  mode: number,
  fill: (handle: FileHandle) => Promise<void>,
): Promise<void> {
  // 'wx' is O_EXCL: a name planted at the temp path is never opened or followed.
  const handle = await open(temp, 'wx', 0o600);
  try {
    await fill(handle);
    // chmod after creation: the mode is exact, not reduced by the umask.
    await handle.chmod(mode);
    // fsync before the rename, or a crash could leave the new name on an empty file.
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Best effort by design: the error being reported is the one that made the
 * write fail. A temp file that survives has a dot-name no reader looks up,
 * the next write uses a fresh random name, and the daemon's next start
 * removes it (removeTemporaryFiles).
 */
async function removeTemp(temp: string): Promise<void> {
  await rm(temp, { force: true }).catch(() => undefined);
}
