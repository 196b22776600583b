import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  candidateSlotFor,
  checkUpgradeSpace,
  guardLegacySeed,
  resolveIfPresent,
  type AgentBinaryPaths,
} from '@aks-flex-node/agentbinary';
import { makeIoError } from '@aks-flex-node/fs';
import { refuseUnfinishedMove, resolveHostRoot } from '@aks-flex-node/hostroot';
import type { HostPaths } from '@aks-flex-node/layout';
import { AgentError, type Logger } from '@aks-flex-node/log';
import type { UpgradeSource } from './upgrade-source.js';

// The daemon's refusals of an upgrade, each under the lock and before
// anything is written: the host is mid-move or holds a legacy seed, the disks
// cannot hold it, the host root moved, the candidate slot is the running
// binary. (A pending upgrade, an unfinished move and a legacy seed are judged
// by shared/agentbinary, for the CLI's direct activation too.)

/**
 * Refuses, before anything is staged, an upgrade the host must not take: an
 * unfinished move's legacy files are a whole installation an earlier release
 * would run from; then the legacy seed. Throws UPGRADE_REFUSED.
 */
export async function refuseUnsafeHost(paths: HostPaths, log: Logger): Promise<void> {
  await refuseUnfinishedMove(paths);
  await guardLegacySeed(paths, log);
}

/**
 * Headroom over the running executable's size when a candidate's size is not
 * known before its download: consecutive releases differ by a few MiB.
 */
const releaseGrowth = 1.1;

/**
 * Refuses, before the request is answered and before anything is written, an
 * upgrade the host's disks cannot hold to its end (the download, the staged
 * candidate, the helper refresh at the upgraded daemon's start). A binary on
 * the host has its exact size; an archive's member is estimated from the
 * running executable, and a remote archive's download from the member (a
 * gzip of an executable is smaller). Throws UPGRADE_REFUSED with the numbers.
 */
export async function refuseShortSpace(
  source: UpgradeSource,
  layout: AgentBinaryPaths,
  context: { runningExecutable: string; downloadsDir: string },
): Promise<void> {
  if (source.kind === 'binary') {
    const candidateBytes = await sizeOf(source.binaryPath);
    await checkUpgradeSpace({ paths: layout, candidateBytes });
    return;
  }
  const candidateBytes = Math.ceil((await sizeOf(context.runningExecutable)) * releaseGrowth);
  const { url } = source.archive;
  // A local archive that cannot be inspected is the download's to report.
  const archiveBytes =
    url.protocol === 'file:'
      ? await sizeOf(fileURLToPath(url)).catch(() => candidateBytes)
      : candidateBytes;
  await checkUpgradeSpace({
    paths: layout,
    candidateBytes,
    download: { dir: context.downloadsDir, bytes: archiveBytes },
  });
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (error) {
    throw makeIoError('inspect', file, error, { code: 'UPGRADE_REFUSED' });
  }
}

/**
 * Refuses a switch whose layout was resolved under a root the host root no
 * longer resolves to. Runs under the lock: the paths were resolved before it
 * was taken, and a move in between would leave them naming files the units
 * no longer run. Throws HOST_ROOT_REFUSED.
 */
export async function refuseMovedRoot(layout: AgentBinaryPaths, paths: HostPaths): Promise<void> {
  const resolvedNow = await resolveHostRoot(paths);
  if (layout.root === resolvedNow) return;
  throw new AgentError(
    'HOST_ROOT_REFUSED',
    `the host root moved from ${layout.root} to ${resolvedNow} after this upgrade resolved its paths`,
    { path: resolvedNow, hint: 'retry the upgrade: it resolves the host root again' },
  );
}

/**
 * The daemon never writes the slot its own process executes. The candidate
 * goes to the slot `current` does not name, which is normally not the running
 * one; but after `current` moved back without a restart yet (a judged
 * failure, a recovery), it is, and replacing it would leave this process
 * running a file no link names while a rollback starts something else.
 *
 * Throws UPGRADE_REFUSED.
 */
export async function refuseRunningSlot(
  layout: AgentBinaryPaths,
  runningExecutable: string,
): Promise<void> {
  const current = await resolveIfPresent(layout.current);
  if (current === undefined) return;
  const slot = candidateSlotFor(layout, current);
  if ((await resolveIfPresent(slot)) !== runningExecutable) return;
  throw new AgentError(
    'UPGRADE_REFUSED',
    `the candidate slot ${slot} is the binary this daemon runs; it is not overwritten`,
    {
      path: slot,
      hint: 'restart the agent (systemctl restart aks-flex-node-agent) so it runs what current names, then retry',
    },
  );
}
