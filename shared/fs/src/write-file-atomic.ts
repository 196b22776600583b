import path from 'node:path';
import { listDirectoriesToSync } from './missing-ancestors.js';
import { mkdirMode } from './mkdir-mode.js';
import { syncDirectory } from './sync-directory.js';
import { writeThroughTemp } from './write-through-temp.js';

/** Options for {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** The file's exact permission bits; the umask is not applied. */
  mode: number;
}

/**
 * Replaces `target` with `data` durably: missing parents are created 0755,
 * the content goes through a synced temp file renamed into place, then every
 * directory whose entries changed is synced, deepest first.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions,
): Promise<void> {
  const dir = path.dirname(target);
  const changedDirs = await listDirectoriesToSync(dir);
  await mkdirMode(dir, 0o755);
  await writeThroughTemp(target, options.mode, async (handle) => {
    await handle.writeFile(data);
  });
  // writeThroughTemp synced `dir`; the created parents' entries are next.
  for (const changed of changedDirs.slice(1)) await syncDirectory(changed);
}
