import {
  agentBinaryPathsUnder,
  hostCandidateTrust,
  refusePendingUpgrade,
  stageAndSwitch,
  type AgentBinaryPaths,
  type CandidateTrust,
  type Host,
  type StagePhase,
  type StageResult,
} from '@aks-flex-node/agentbinary';
import type { AgentUpgradeRequest, Operation } from '@aks-flex-node/api';
import { resolveHostRoot } from '@aks-flex-node/hostroot';
import type { HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import type { MutationQueue } from '../mutation-queue.js';
import type { OperationRegistry, UpgradeCancels } from './operation-registry.js';
import { refuseMovedRoot, refuseRunningSlot } from './upgrade-refusals.js';
import {
  parseUpgradeSource,
  precheckUpgradeSource,
  type CandidateFetcher,
  type UpgradeSource,
} from './upgrade-source.js';

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
