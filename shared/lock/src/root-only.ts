import { constants } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { AgentError, messageOf } from '@aks-flex-node/log';

/** The lock files' mode: flock(2) needs only a read descriptor, so any read bit lets a user hold one. */
export const lockFileMode = 0o600;

/** The run directory's mode, as the socket unit's `DirectoryMode=` sets it. */
export const runDirectoryMode = 0o750;

/**
 * Makes an open lock file or directory root's alone with `mode`, through its
 * descriptor (fchmod, fchown): a path could be swapped between a check and a
 * change, a descriptor cannot. Run at every acquisition, so a file an earlier
 * build or release created 0644, or another user's, is tightened the next
 * time anything takes it. A process that is not root (a developer's test
 * run) can only have created the file itself, and keeps it as its own.
 * Throws HOST_ROOT_IO naming `target`.
 */
export async function makeRootOnly(handle: FileHandle, mode: number, target: string) {
  try {
    const info = await handle.stat();
    if ((info.mode & 0o7777) !== mode) await handle.chmod(mode);
    if (process.getuid?.() === 0 && (info.uid !== 0 || info.gid !== 0)) await handle.chown(0, 0);
  } catch (error) {
    throw new AgentError('HOST_ROOT_IO', `make ${target} root's alone: ${messageOf(error)}`, {
      path: target,
      hint: `check ${target}'s owner and mode (it must be root's, mode ${mode.toString(8)})`,
      cause: error,
    });
  }
}

/**
 * Creates the run directory that holds the socket and the product's locks,
 * or makes an existing one root's alone (0750): a user who can enter it could
 * open `daemon.lock` or create `activation.lock` and hold either.
 * Throws HOST_ROOT_IO.
 */
export async function prepareRunDirectory(dir: string): Promise<void> {
  let handle: FileHandle;
  try {
    await mkdir(dir, { recursive: true, mode: runDirectoryMode });
    // O_NOFOLLOW: a link at the name is refused, never followed to a directory elsewhere.
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new AgentError('HOST_ROOT_IO', `create ${dir}: ${messageOf(error)}`, {
      path: dir,
      hint: `check that ${dir} is a directory root can create`,
      cause: error,
    });
  }
  try {
    await makeRootOnly(handle, runDirectoryMode, dir);
  } finally {
    await handle.close();
  }
}
