/**
 * The AgentUpgrade requests, up to the switch: `begin` one (the source
 * checked at the door, the lock taken, the operation admitted, then staged
 * and switched) and `cancel` one before its switch; and the daemon's
 * refusals of an upgrade, which run under the lock before anything is written.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  agentBinaryPathsUnder,
  candidateSlotFor,
  hostCandidateTrust,
  parseUpgradeSource,
  precheckUpgradeSource,
  refusePendingUpgrade,
  resolveIfPresent,
  stageAndSwitch,
  type AgentBinaryPaths,
  type CandidateFetcher,
  type CandidateTrust,
  type Host,
  type StagePhase,
  type StageResult,
  type UpgradeSource,
} from '@aks-flex-node/agentbinary';
import type { AgentUpgradeRequest, Operation } from '@aks-flex-node/api';
import {
  bytesFreedByReplacing,
  filesystemOf,
  findSpaceShortfall,
  makeIoError,
  type SpaceStep,
} from '@aks-flex-node/fs';
import { guardLegacySeed, refuseUnfinishedMove, resolveHostRoot } from '@aks-flex-node/hostroot';
import { nspawnLifecycleFile, type HostPaths } from '@aks-flex-node/layout';
import { AgentError, type Logger } from '@aks-flex-node/log';
import type { MutationQueue } from '../mutation-queue.js';
import type { OperationRegistry, UpgradeCancels } from './operation-registry.js';

/** What the upgrade requests need. */
export interface UpgradeRequestsDeps {
  paths: HostPaths;
  log: Logger;
  queue: MutationQueue;
  registry: OperationRegistry;
  cancels: UpgradeCancels;
  /** Makes a source's candidate a local file (`createCandidateFetcher` in production). */
  fetchCandidate: CandidateFetcher;
  /** Runs under the lock before anything is written; refuses an upgrade the host must not take (`refuseUnsafeHost` in production). */
  guard: () => Promise<void>;
  /**
   * Refuses, under the lock and before the request is answered, an upgrade
   * the disks cannot hold to its end (`refuseShortSpace` in production).
   */
  checkSpace: (source: UpgradeSource, layout: AgentBinaryPaths) => Promise<void>;
  host: Pick<Host, 'runningExecutable' | 'wallClock'>;
  /** Who may have written a binary source; the host's rule (root's only) unless a test narrows it. */
  candidateTrust?: CandidateTrust | undefined;
  /**
   * Runs what follows an admitted upgrade once the lock is released (the
   * restart after a switch, or the record of a failure), in the background;
   * resolves when that has ended. It lives apart (upgrade-service.ts) so a
   * request reaches nothing that runs after the switch.
   */
  finish: (id: string, staged: Promise<void>) => Promise<void>;
}

/** The AgentUpgrade requests: begin one (up to the switch), cancel one before its switch. */
export interface UpgradeRequests {
  begin(request: AgentUpgradeRequest): Promise<Operation>;
  /**
   * Cancels an upgrade that has not begun to switch and resolves with it once
   * it has stopped. Throws NOT_FOUND, OPERATION_NOT_CANCELLABLE.
   */
  cancel(id: string): Promise<Operation>;
}

/** An upgrade admitted under the lock: its operation, and what cancels it. */
interface Admitted {
  operation: Operation;
  signal: AbortSignal;
}

/** The slots and links under the host root as it resolves now. */
export async function binaryPathsOf(paths: HostPaths): Promise<AgentBinaryPaths> {
  return agentBinaryPathsUnder(await resolveHostRoot(paths), paths.machinesDir);
}

/**
 * Builds the {@link UpgradeRequests}. A request runs as three named steps:
 * `begin` (validate the source, take the lock), `admit` (under the lock:
 * refuse a pending one, create the operation; the request is answered then)
 * and `stage` (still under the lock: the guards, then stageAndSwitch). What
 * follows the switch is `deps.finish`'s.
 */
export function createUpgradeRequests(deps: UpgradeRequestsDeps): UpgradeRequests {
  const { log, paths, registry, cancels, host } = deps;

  /** Under the lock, before the request is answered: one pending upgrade at a time. */
  const admit = async (source: UpgradeSource, layout: AgentBinaryPaths): Promise<Admitted> => {
    await refusePendingUpgrade(paths.signalFile);
    // Answered as a refusal (nothing changed), not as an upgrade that failed halfway.
    await deps.checkSpace(source, layout);
    const operation = registry.create(source.redactedUrl);
    return { operation, signal: cancels.open(operation.id) };
  };

  /** Under the lock, answered already: refuses what the host must not take, then stages and switches. */
  const stage = async (
    { operation: { id }, signal }: Admitted,
    source: UpgradeSource,
    layout: AgentBinaryPaths,
  ): Promise<void> => {
    await deps.guard();
    await refuseMovedRoot(layout, paths);
    await refuseRunningSlot(layout, await host.runningExecutable());
    const report = (phase: StagePhase) => {
      registry.update(id, { phase });
    };
    const result = await stageAndSwitch({
      paths: layout,
      hostRoot: paths,
      signalFile: paths.signalFile,
      operationId: id,
      redactedUrl: source.redactedUrl,
      log: log.child({ op: 'agent-upgrade', opId: id }),
      clock: host,
      port: {
        fetch: (target) =>
          deps.fetchCandidate(source, target, {
            onProgress: (progress) => {
              registry.update(id, { ...progress });
            },
            onExtracting: () => {
              report('extracting');
            },
            signal,
          }),
        report,
      },
      signal,
    });
    reportSwitched(id, result);
  };

  const reportSwitched = (id: string, result: StageResult) => {
    registry.update(id, {
      phase: 'restarting',
      state: 'restarting',
      message: `switched to ${result.candidateVersion.version}; the agent restarts into it`,
      fields: {
        fromPath: result.previous,
        toPath: result.candidate,
        toVersion: result.candidateVersion.version,
        switchedAt: host.wallClock().toISOString(),
      },
    });
  };

  return {
    begin: async (request) => {
      const source = parseUpgradeSource(request.source);
      await precheckUpgradeSource(source, deps.candidateTrust ?? hostCandidateTrust);
      const layout = await binaryPathsOf(paths);
      const { admitted, done } = await deps.queue.start(
        'an AgentUpgrade',
        (upgrade: Admitted) => stage(upgrade, source, layout),
        () => admit(source, layout),
      );
      const { id } = admitted.operation;
      cancels.track(id, deps.finish(id, done));
      return admitted.operation;
    },
    cancel: async (id) => {
      await cancels.cancel(id);
      const operation = registry.get(id);
      if (operation === undefined) throw new Error(`operation ${id} vanished after its cancel`);
      return operation;
    },
  };
}

// The daemon's refusals of an upgrade, each under the lock and before
// anything is written: the host is mid-move or holds a legacy seed, the disks
// cannot hold it, the host root moved, the candidate slot is the running
// binary. (A pending upgrade is judged by the upgrade state in
// shared/agentbinary; an unfinished move and a legacy seed by the host root
// in shared/hostroot: the CLI's direct activation refuses them too.)

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
  steps.push({
    dir: paths.slotDir,
    bytes: -(await bytesFreedByReplacing(slot)),
    what: 'the old slot',
  });
  const helperDir = path.dirname(helper);
  if ((await filesystemOf(helperDir)).device === (await filesystemOf(paths.slotDir)).device) {
    return steps;
  }
  steps.push({
    dir: helperDir,
    bytes: candidateBytes,
    what: 'the refreshed nspawn lifecycle helper',
  });
  steps.push({
    dir: helperDir,
    bytes: -(await bytesFreedByReplacing(helper)),
    what: 'the old helper',
  });
  return steps;
}

/**
 * Refuses an upgrade whose writes would not fit, before anything changes:
 * per filesystem, the most the steps hold at once must fit in the space free
 * outside its root reserve. A filesystem found full halfway (ENOSPC in the
 * helper refresh) would otherwise fail the upgrade after the switch, when it
 * can only roll back.
 *
 * Throws UPGRADE_REFUSED naming the filesystem's directory, the bytes needed
 * and the bytes free; HOST_ROOT_IO when a directory cannot be inspected.
 */
export async function checkUpgradeSpace(input: UpgradeSpaceInput): Promise<void> {
  const short = await findSpaceShortfall(await planUpgradeWrites(input));
  if (short === undefined) return;
  const { dir, neededBytes, freeBytes, writes } = short;
  throw new AgentError(
    'UPGRADE_REFUSED',
    `not enough free space for the AgentUpgrade on the filesystem holding ${dir}: ` +
      `it needs ${mebibytes(neededBytes)} (${writes.join(', ')}) and ${mebibytes(freeBytes)} is free`,
    {
      path: dir,
      hint:
        `free at least ${mebibytes(neededBytes - freeBytes)} on the filesystem holding ${dir} ` +
        `(\`df -h ${dir}\`) and run the upgrade again; docs/usage/operations.md says how much disk the agent needs`,
    },
  );
}

function mebibytes(bytes: number): string {
  return `${Math.ceil(bytes / 2 ** 20)} MiB`;
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
