import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError } from './io-error.js';
import { listDirectoriesToSync } from './missing-ancestors.js';
import { mkdirMode } from './mkdir-mode.js';
import { syncDirectory } from './sync-directory.js';
import { writeThroughTemp } from './write-through-temp.js';

/** Options for {@link installFile}. */
export interface InstallFileOptions {
  /**
   * The installed file's exact permission bits. Unlike Go's renameio v2 the
   * umask is not applied, so a binary is 0755 under any umask (spec §7 asks
   * for a deliberate choice; hostroot#92 left the umask case open).
   */
  mode: number;
}

/**
 * Writes go in 64 KiB pieces, not larger: on a filesystem with large folios
 * (ext4 since Linux 6.16, XFS) the page cache keeps a file in folios as big
 * as the writes that made it, and a process that runs the file maps whole
 * folios. A daemon run from a copy made in 1 MiB writes was 27 MiB larger
 * (74.9 against 48.3 MiB of the executable resident) than one run from the
 * same bytes written in 64 KiB pieces; the copy costs about 0.15 s more CPU.
 * docs/performance.md, "The executable's pages".
 */
export const installWriteBytes = 64 * 1024;

/**
 * Copies `source` to `target` atomically and durably: missing parents are
 * created 0755, the copy goes through a synced temp file renamed into place.
 * The source is opened first, so a missing source fails before anything is
 * created and the previous target stays intact.
 */
export async function installFile(
  source: string,
  target: string,
  options: InstallFileOptions,
): Promise<void> {
  let input: FileHandle;
  try {
    input = await open(source, 'r');
  } catch (error) {
    throw makeIoError('read', source, error, { object: `to install it as ${target}` });
  }
  try {
    await installOpenFile(input, source, target, options);
  } finally {
    await input.close();
  }
}

/**
 * {@link installFile} from a descriptor the caller opened and checked
 * (read from its current offset to the end), so nothing is read by name
 * again between the check and the copy. `source` names it in errors. The
 * caller closes `input`.
 */
export async function installOpenFile(
  input: FileHandle,
  source: string,
  target: string,
  options: InstallFileOptions,
): Promise<void> {
  const dir = path.dirname(target);
  const changedDirs = await listDirectoriesToSync(dir);
  await mkdirMode(dir, 0o755);
  await writeThroughTemp(target, options.mode, (output) => copyContent(input, output, source));
  for (const changed of changedDirs.slice(1)) await syncDirectory(changed);
}

async function copyContent(input: FileHandle, output: FileHandle, source: string): Promise<void> {
  const buffer = Buffer.allocUnsafe(installWriteBytes);
  for (;;) {
    let bytesRead: number;
    try {
      ({ bytesRead } = await input.read(buffer, 0, buffer.length, null));
    } catch (error) {
      throw makeIoError('read', source, error);
    }
    if (bytesRead === 0) return;
    await output.write(buffer, 0, bytesRead);
  }
}
