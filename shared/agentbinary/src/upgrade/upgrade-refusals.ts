/**
 * The refusals shared/agentbinary makes of an upgrade before it writes
 * anything: the disks cannot hold its writes to its end, or a legacy seed
 * would let a release that predates the host root adopt it after the switch.
 */
import { lstat, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError } from '@aks-flex-node/fs';
import { isLegacyReleased, removeLegacySeed, type HostRootPaths } from '@aks-flex-node/hostroot';
import { nspawnLifecycleFile } from '@aks-flex-node/layout';
import { AgentError, isNotFound, type Logger } from '@aks-flex-node/log';
import { candidateSlotFor, type AgentBinaryPaths } from '../agent-binary-paths.js';
import { isRegularExecutable } from '../ensure-layout.js';
import { resolveIfPresent } from '../resolve-link.js';

// The space the upgrade's writes need.

/**
 * One write or removal an upgrade makes, in the order it makes them:
 * `bytes` added (positive) or freed (negative) in the directory `dir`.
 */
export interface SpaceStep {
  dir: string;
  bytes: number;
  what: string;
}

/** What an upgrade will write, as {@link checkUpgradeSpace} needs it. */
export interface UpgradeSpaceInput {
  paths: AgentBinaryPaths;
  /** The candidate executable's size, or the best estimate of it. */
  candidateBytes: number;
  /** Where a release archive is downloaded to, and its size; absent for a binary on the host. */
  download?: { dir: string; bytes: number };
}

/**
 * The writes of one upgrade in order, with the space each later step frees:
 * the download, the candidate staged beside its slot, the archive removed,
 * the rename over the slot (freeing the binary an earlier upgrade left
 * there), then, at the upgraded daemon's start, the nspawn lifecycle helper
 * refreshed. The helper is part of the upgrade: a candidate that cannot write
 * it fails its judgement. It is a hard link to the executable, which takes no
 * space, wherever its directory is on the slots' filesystem; elsewhere it is
 * a temporary copy renamed over the old one.
 */
export async function planUpgradeWrites(input: UpgradeSpaceInput): Promise<SpaceStep[]> {
  const { paths, candidateBytes, download } = input;
  const current = await resolveIfPresent(paths.current);
  const slot = current === undefined ? paths.blue : candidateSlotFor(paths, current);
  const helper = path.join(paths.root, nspawnLifecycleFile);
  const steps: SpaceStep[] = [];
  if (download !== undefined) {
    steps.push({ dir: download.dir, bytes: download.bytes, what: 'the downloaded archive' });
  }
  steps.push({ dir: paths.slotDir, bytes: candidateBytes, what: 'the staged candidate' });
  if (download !== undefined) {
    steps.push({ dir: download.dir, bytes: -download.bytes, what: 'the archive removed' });
  }
  steps.push({ dir: paths.slotDir, bytes: -(await freedByReplacing(slot)), what: 'the old slot' });
  const helperDir = path.dirname(helper);
  if (
    (await existingAncestor(helperDir)).device === (await existingAncestor(paths.slotDir)).device
  ) {
    return steps;
  }
  steps.push({
    dir: helperDir,
    bytes: candidateBytes,
    what: 'the refreshed nspawn lifecycle helper',
  });
  steps.push({
    dir: helperDir,
    bytes: -(await freedByReplacing(helper)),
    what: 'the old helper',
  });
  return steps;
}

/**
 * Refuses an upgrade whose writes would not fit, before anything changes:
 * per filesystem, the most the steps hold at once must not exceed the space
 * free outside its root reserve (statfs `bavail`: the agent, as root, could
 * dip into the reserve, but the host's other services need it more). A
 * filesystem found full halfway (ENOSPC in the helper refresh) would
 * otherwise fail the upgrade after the switch, when it can only roll back.
 *
 * Throws UPGRADE_REFUSED naming the filesystem's directory, the bytes needed
 * and the bytes free; HOST_ROOT_IO when a directory cannot be inspected.
 */
export async function checkUpgradeSpace(input: UpgradeSpaceInput): Promise<void> {
  const steps = await planUpgradeWrites(input);
  const byDevice = new Map<number, { dir: string; held: number; peak: number; what: string[] }>();
  for (const step of steps) {
    const { dir, device } = await existingAncestor(step.dir);
    const fs = byDevice.get(device) ?? { dir, held: 0, peak: 0, what: [] };
    fs.held += step.bytes;
    fs.peak = Math.max(fs.peak, fs.held);
    if (step.bytes > 0) fs.what.push(step.what);
    byDevice.set(device, fs);
  }
  for (const fs of byDevice.values()) {
    if (fs.peak <= 0) continue;
    const free = await freeBytes(fs.dir);
    if (fs.peak <= free) continue;
    throw new AgentError(
      'UPGRADE_REFUSED',
      `not enough free space for the AgentUpgrade on the filesystem holding ${fs.dir}: ` +
        `it needs ${mebibytes(fs.peak)} (${fs.what.join(', ')}) and ${mebibytes(free)} is free`,
      {
        path: fs.dir,
        hint:
          `free at least ${mebibytes(fs.peak - free)} on the filesystem holding ${fs.dir} ` +
          `(\`df -h ${fs.dir}\`) and run the upgrade again; docs/usage/operations.md says how much disk the agent needs`,
      },
    );
  }
}

/** The bytes a rename over `file` frees: a regular file no other link keeps. */
async function freedByReplacing(file: string): Promise<number> {
  try {
    const info = await lstat(file);
    return info.isFile() && info.nlink === 1 ? info.size : 0;
  } catch (error) {
    if (isNotFound(error)) return 0;
    throw makeIoError('inspect', file, error);
  }
}

/** The nearest directory that exists (the downloads directory is created by the upgrade). */
async function existingAncestor(dir: string): Promise<{ dir: string; device: number }> {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      return { dir: at, device: (await stat(at)).dev };
    } catch (error) {
      if (!isNotFound(error) || at === path.dirname(at)) throw makeIoError('inspect', at, error);
    }
  }
}

async function freeBytes(dir: string): Promise<number> {
  try {
    const info = await statfs(dir);
    return info.bavail * info.bsize;
  } catch (error) {
    throw makeIoError('inspect the free space of', dir, error);
  }
}

function mebibytes(bytes: number): string {
  return `${Math.ceil(bytes / 2 ** 20)} MiB`;
}

// The legacy seed, before every switch.

/**
 * Runs before every switch. A release that predates the host root, once it is
 * switched to (a downgrade, or a rollback target), adopts an executable at
 * `/usr/local/bin/aks-flex-node` as its own and builds a second layout under
 * `/usr/local`; this release refuses to run on a host installed under both
 * roots, so such a rollback would never start. So once nothing runs from the
 * legacy root, a seeded copy is removed, and anything else there that still
 * runs (an operator's link) refuses the switch.
 *
 * Throws UPGRADE_REFUSED.
 */
export async function guardLegacySeed(
  paths: HostRootPaths & { legacySeed: string },
  log: Logger,
): Promise<void> {
  let released: boolean;
  try {
    released = await isLegacyReleased(paths);
  } catch (error) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `inspect the host root ${paths.root} before switching: it could not be read`,
      {
        path: paths.root,
        cause: error,
        hint: 'check the path with `ls -ld`, then retry the upgrade',
      },
    );
  }
  if (!released) return;
  // Kept while this process runs from it: a CLI an earlier release's install
  // script left there activating directly. No release that predates the host
  // root can be switched to (the candidate check refuses it), and the daemon
  // the switch starts, from the host root, removes the seed.
  if ((await removeLegacySeed(paths, log, process.execPath)) === 'kept-running') return;
  if (await isRegularExecutable(paths.legacySeed)) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `${paths.legacySeed} still runs an agent binary; a release that predates the host root would adopt it after this switch`,
      {
        path: paths.legacySeed,
        hint: `remove ${paths.legacySeed}, or put a link to the agent in /usr/local/sbin instead, then retry`,
      },
    );
  }
}
