import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import { isTemporarySlotName, temporaryNames } from '../agent-binary-paths.js';

/** Where {@link sweepUpgradeLeftovers} looks. */
export interface LeftoverPlaces {
  /** The slot directory (`ROOT/lib/aks-flex-node`). */
  slotDir: string;
  /** The daemon's downloads directory. */
  downloadsDir: string;
  /** Where the CLI puts its activation snapshots (the state directory). */
  stateDir: string;
}

/**
 * The CLI may be between taking a snapshot and handing it to the daemon
 * while the daemon restarts; only a snapshot older than this is abandoned.
 */
export const snapshotGraceMs = 15 * 60 * 1000;

/**
 * Removes the temporary files a killed upgrade or activation left behind:
 * partial downloads, partial or staged candidates beside the slots, and
 * abandoned CLI snapshots. Repeated crashes would otherwise fill the disk.
 * Runs at daemon start, under the single-instance guard and before the API
 * is served, so no upgrade of this host is using them. Matches names only
 * (see `temporaryNames` in agent-binary-paths.ts); slots and links are
 * never touched. A file that cannot be removed is logged and left, as the
 * daemon can still serve.
 * Returns the paths removed.
 */
export async function sweepUpgradeLeftovers(
  places: LeftoverPlaces,
  log: Logger,
  now: () => number = Date.now,
): Promise<string[]> {
  const doomed = [
    ...(await namesIn(places.slotDir, log))
      .filter(isTemporarySlotName)
      .map((name) => path.join(places.slotDir, name)),
    ...(await namesIn(places.downloadsDir, log))
      .filter((name) => temporaryNames.downloadedArchive.test(name))
      .map((name) => path.join(places.downloadsDir, name)),
    ...(await abandonedSnapshots(places.stateDir, now(), log)),
  ];
  const removed: string[] = [];
  for (const file of doomed) {
    try {
      await rm(file, { recursive: true, force: true });
      removed.push(file);
      log.info({ path: file }, 'removed a temporary file a stopped upgrade left behind');
    } catch (error) {
      log.warn(
        { err: error, path: file },
        'could not remove a leftover temporary file; the next start retries',
      );
    }
  }
  return removed;
}

async function abandonedSnapshots(stateDir: string, now: number, log: Logger): Promise<string[]> {
  const abandoned: string[] = [];
  for (const name of await namesIn(stateDir, log)) {
    if (!temporaryNames.activationSnapshot.test(name)) continue;
    const dir = path.join(stateDir, name);
    const info = await lstat(dir).catch(() => undefined);
    if (info?.isDirectory() === true && now - info.mtimeMs > snapshotGraceMs) abandoned.push(dir);
  }
  return abandoned;
}

async function namesIn(dir: string, log: Logger): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (!isNotFound(error)) {
      log.warn(
        { err: error, path: dir },
        'could not list a directory to sweep; the next start retries',
      );
    }
    return [];
  }
}
