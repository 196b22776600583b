import { link, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '@aks-flex-node/log';
import { makeIoError } from './io-error.js';
import { listDirectoriesToSync } from './missing-ancestors.js';
import { mkdirMode } from './mkdir-mode.js';
import { syncDirectory } from './sync-directory.js';
import { temporaryPathFor } from './temporary-name.js';

/** Crash points between the durable steps of {@link linkThroughTemp}, for the caller's failpoints. */
export interface LinkThroughTempSteps {
  /** The temporary name exists, the target is not replaced yet. */
  linked?: () => void;
  /** The target is the new link; its directory is not synced yet. */
  renamed?: () => void;
}

// link(2) errors that say this file system, or these two names, cannot share
// an inode: another mount (EXDEV), a file system without hard links or an
// immutable source (EPERM), the source's link count at its limit (EMLINK).
// The caller copies instead; any other error is a fault it reports.
const cannotLinkHere = new Set(['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP']);

/**
 * Makes `target` a hard link to `source` (a regular file, not a symlink:
 * link(2) does not follow one): link under a temporary name beside the
 * target, rename it over the target, sync the directory. Readers of `target`
 * see the old file or `source`, never a part; a kill after the link leaves the
 * temporary name for the start sweep (removeTemporaryFiles). Missing parents
 * are created 0755. Returns false, changing nothing, when the two names
 * cannot share an inode (see {@link cannotLinkHere}), so the caller copies.
 */
export async function linkThroughTemp(
  source: string,
  target: string,
  steps: LinkThroughTempSteps = {},
): Promise<boolean> {
  const dir = path.dirname(target);
  const changedDirs = await listDirectoriesToSync(dir);
  await mkdirMode(dir, 0o755);
  const temp = temporaryPathFor(target);
  try {
    await link(source, temp);
  } catch (error) {
    if (cannotLinkHere.has(errnoCode(error) ?? '')) return false;
    throw makeIoError('link', temp, error, { object: `to ${source}` });
  }
  steps.linked?.();
  try {
    await rename(temp, target);
  } catch (error) {
    // Best effort: the rename's failure is the one reported, and a name left
    // behind is the start sweep's to remove.
    await rm(temp, { force: true }).catch(() => undefined);
    throw makeIoError('rename', temp, error, { object: `over ${target}` });
  }
  steps.renamed?.();
  for (const changed of changedDirs) await syncDirectory(changed);
  return true;
}
