import { findTemporaryFiles, removeTemporaryFiles } from '@aks-flex-node/fs';
import type { HostPaths, TemporaryFilePlace } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import { errnoCode, isAgentError, type Logger } from '@aks-flex-node/log';

/** What {@link sweepTemporaryFiles} needs. */
export interface TemporarySweep {
  paths: Pick<HostPaths, 'activationLock' | 'goUpgradeLock'>;
  places: readonly TemporaryFilePlace[];
  log: Logger;
}

/**
 * Removes the temporary files and links a stopped write left anywhere the
 * product writes (a power cut while the nspawn helper was installed left 131
 * MB in the host root's `bin`, and nothing else ever looks there). Under the
 * activation lock, taken without waiting: the upgrade guard and the offline
 * one-shots write through the same temporary names while this daemon starts,
 * and removing one of theirs between its creation and its rename would fail
 * their write. Busy, it is skipped; the next start sweeps. A place that
 * cannot be swept is logged and left, as the daemon can still serve.
 * Returns the paths removed.
 */
export async function sweepTemporaryFiles(sweep: TemporarySweep): Promise<string[]> {
  const { log } = sweep;
  // Looked for first, without the lock: nearly every start finds none, and
  // then costs a few directory listings rather than a lock's take.
  if (!(await anyLeft(sweep.places))) return [];
  try {
    return await withActivationLock(
      {
        lockPath: sweep.paths.activationLock,
        goLockPath: sweep.paths.goUpgradeLock,
        log,
        purpose: "sweeping a stopped write's temporary files",
      },
      () => sweepPlaces(sweep.places, log),
    );
  } catch (error) {
    if (!isAgentError(error, 'ACTIVATION_IN_PROGRESS')) throw error;
    log.info(
      { err: error },
      'not sweeping temporary files: an activation holds the lock; the next start sweeps',
    );
    return [];
  }
}

async function anyLeft(places: readonly TemporaryFilePlace[]): Promise<boolean> {
  for (const place of places) {
    // A directory that cannot be listed is reported by the sweep itself.
    const found = await findTemporaryFiles(place.dir, place.isProductFile).catch(() => [null]);
    if (found.length > 0) return true;
  }
  return false;
}

async function sweepPlaces(places: readonly TemporaryFilePlace[], log: Logger) {
  const removed: string[] = [];
  for (const place of places) {
    try {
      const here = await removeTemporaryFiles(place.dir, place.isProductFile);
      for (const file of here) {
        log.info({ path: file }, 'removed a temporary file a stopped write left behind');
      }
      removed.push(...here);
    } catch (error) {
      if (place.mayBeReadOnly && isReadOnly(error)) {
        log.debug({ dir: place.dir }, 'the legacy root is read-only here; nothing to sweep');
        continue;
      }
      log.warn(
        { err: error, dir: place.dir },
        'could not sweep temporary files from a directory; the next start retries',
      );
    }
  }
  return removed;
}

function isReadOnly(error: unknown): boolean {
  const code = errnoCode(isAgentError(error) ? error.cause : error);
  return code === 'EROFS' || code === 'EACCES' || code === 'EPERM';
}
