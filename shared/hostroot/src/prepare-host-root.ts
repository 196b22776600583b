import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { mkdirMode } from '@aks-flex-node/fs';
import type { Logger } from '@aks-flex-node/log';
import type { HostRootPaths } from './host-root-paths.js';
import { restoreLabels, type Relabel } from './restore-labels.js';

/** Options for {@link prepareHostRoot}. */
export interface PrepareHostRootOptions {
  /** Restores SELinux labels under the root; defaults to {@link restoreLabels}. */
  relabel?: Relabel;
}

/**
 * Creates the host root, its parent if missing, and `subdirs` for a new
 * installation, each 0755 whatever the umask, then restores SELinux labels
 * under the root (spec hostroot §3.6). Run after migrate.
 */
export async function prepareHostRoot(
  paths: HostRootPaths,
  log: Logger,
  subdirs: readonly string[],
  options: PrepareHostRootOptions = {},
): Promise<void> {
  const relabel = options.relabel ?? restoreLabels;
  // Any link at the root, migrate's or an operator's, leads to an existing
  // installation that is not ours to arrange or relabel.
  if (await isSymlink(paths.root)) return;
  // '' stands for the root itself, so it is created even when no subdirs are asked for.
  for (const dir of ['', ...subdirs]) await mkdirMode(path.join(paths.root, dir), 0o755);
  // Only the root: the parent and its labels are the host's.
  await relabel(paths.root, log);
}

/** Other lstat errors fall through to mkdirMode, which reports them with its verb. */
async function isSymlink(root: string): Promise<boolean> {
  try {
    return (await lstat(root)).isSymbolicLink();
  } catch {
    return false;
  }
}
