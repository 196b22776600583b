import { lstat, stat } from 'node:fs/promises';
import { makeIoError, removeIfExists } from '@aks-flex-node/fs';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import { legacySeedOf, type HostRootPaths } from './host-root-paths.js';

/** What {@link removeLegacySeed} did with the seed. */
export type SeedRemoval = 'removed' | 'absent' | 'kept-running';

/**
 * Removes the plain binary install scripts seed at `<legacy>/bin/aks-flex-node`
 * for releases before the host root. Call it only once {@link isLegacyReleased}
 * is true: until then an agent may still run from the legacy root. A link at
 * that name is an earlier release's compatibility link or an operator's, and
 * is kept; a missing seed is fine.
 *
 * `running` is this process's executable (`process.execPath`). A seed that is
 * that very file is kept: a daemon an earlier release's install script
 * started from /usr/local/bin reads its own executable for the rest of its
 * life (the helper it installs, its lazily loaded code), and the next start,
 * from the host root, removes the seed. Undefined keeps nothing: reset passes
 * it, since the agent ends with the reset whatever process runs it.
 */
export async function removeLegacySeed(
  paths: HostRootPaths,
  log: Logger,
  running: string | undefined,
): Promise<SeedRemoval> {
  const seed = legacySeedOf(paths);
  let info;
  try {
    info = await lstat(seed);
  } catch (error) {
    if (isNotFound(error)) return 'absent';
    throw makeIoError('inspect', seed, error);
  }
  if (!info.isFile()) return 'absent';
  if (running !== undefined && (await isSameFile(info, running))) {
    log.info(
      { path: seed },
      'keeping the agent binary an install script left for earlier releases while this process runs from it; the next start from the host root removes it',
    );
    return 'kept-running';
  }
  log.info({ path: seed }, 'removing the agent binary an install script left for earlier releases');
  await removeIfExists(seed);
  return 'removed';
}

/** Whether `running` is the file `seed` describes; a running executable that cannot be read is not. */
async function isSameFile(seed: { dev: number; ino: number }, running: string): Promise<boolean> {
  try {
    const info = await stat(running);
    return info.dev === seed.dev && info.ino === seed.ino;
  } catch {
    // Gone or unreadable: it cannot be the seed, which lstat just found.
    return false;
  }
}
