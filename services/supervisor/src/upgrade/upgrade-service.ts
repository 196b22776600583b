import {
  agentBinaryPathsUnder,
  hostCandidateTrust,
  daemonInstanceId,
  judgeStartedUpgrade,
  listOperationRecords,
  recoverAgentUpgrade,
  refusePendingUpgrade,
  stageAndSwitch,
  writeOperationRecord,
  type AgentBinaryPaths,
  type CandidateTrust,
  type JudgeOutcome,
  type StagePhase,
  type StageResult,
  type Host,
} from '@aks-flex-node/agentbinary';
import type {
  AgentUpgradeRequest,
  MachineCopyStatus,
  Operation,
  RecoveryResponse,
} from '@aks-flex-node/api';
import { resolveHostRoot } from '@aks-flex-node/hostroot';
import type { HostPaths } from '@aks-flex-node/layout';
import { isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { MutationQueue } from '../mutation-queue.js';
import { describeOperation } from './describe-operation.js';
import type { MachineCopyKeeper } from './machine-copy-keeper.js';
import { createUpgradeCancels, type OperationRegistry } from './operation-registry.js';
import type { RestartExecutor } from './restart-executor.js';
import { refuseMovedRoot, refuseRunningSlot } from './upgrade-refusals.js';
import {
  parseUpgradeSource,
  precheckUpgradeSource,
  type CandidateFetcher,
  type UpgradeSource,
} from './upgrade-source.js';

/** What the upgrade service needs. */
export interface UpgradeServiceDeps {
  paths: HostPaths;
  log: Logger;
  queue: MutationQueue;
  registry: OperationRegistry;
  restart: RestartExecutor;
  /** Makes a source's candidate a local file (`createCandidateFetcher` in production). */
  fetchCandidate: CandidateFetcher;
  /** Runs under the lock before anything is written; refuses an upgrade the host must not take (legacy seed). */
  guard: () => Promise<void>;
  /**
   * Refuses, under the lock and before the request is answered, an upgrade
   * the disks cannot hold to its end (`refuseShortSpace` in production).
   */
  checkSpace: (source: UpgradeSource, layout: AgentBinaryPaths) => Promise<void>;
  host: Pick<Host, 'runningExecutable' | 'wallClock'>;
  /** Who may have written a binary source; the host's rule (root's only) unless a test narrows it. */
  candidateTrust?: CandidateTrust;
  /** Syncs the machine's copy of the agent an upgrade or rollback could not write. */
  machineCopy: MachineCopyKeeper;
}

/** What a start's judgement is told and tells. */
export interface JudgeAtStartOptions {
  startupFailure?: string | undefined;
  onNote?: (note: string) => void;
}

/** AgentUpgrade as the daemon runs it: begin, report, judge at start, recover. */
export interface UpgradeService {
  begin(request: AgentUpgradeRequest): Promise<Operation>;
  get(id: string): Promise<Operation | undefined>;
  /**
   * Waits up to a minute for a busy activation lock; aborting `stopped` ends
   * the wait with the refusal. `startupFailure`, what this start could not
   * refresh, fails a pending upgrade's judgement; `onNote` is told what
   * became of a corrupt signal, for `status`.
   */
  judgeAtStart(stopped?: AbortSignal, options?: JudgeAtStartOptions): Promise<JudgeOutcome>;
  recover(message: string | undefined): Promise<RecoveryResponse>;
  /**
   * Cancels an upgrade that has not begun to switch and resolves with it once
   * it has stopped. Throws NOT_FOUND, OPERATION_NOT_CANCELLABLE.
   */
  cancel(id: string): Promise<Operation>;
  /**
   * Checks the active machine's copy of the agent against current, and keeps
   * syncing it while it differs (the start runs it once the signal is judged).
   */
  keepMachineCopy(): void;
  /** Why a machine's copy differs from current, while it does (status shows it). */
  machineCopyView(): MachineCopyStatus | undefined;
  /** Resolves when every background upgrade this process started has finished its part, and the copy's retries have stopped. */
  drain(): Promise<void>;
}

/** An upgrade admitted under the lock: its operation, and what cancels it. */
interface Admitted {
  operation: Operation;
  signal: AbortSignal;
}

/**
 * Builds the daemon's {@link UpgradeService}. An upgrade runs as four named
 * steps: `begin` (validate the source, take the lock), `admit` (under the
 * lock: refuse a pending one, create the operation), `stage` (still under
 * the lock: the guards, then stageAndSwitch) and, once the lock is released,
 * `handOver` (restart into the candidate) or `recordFailure`.
 */
export function createUpgradeService(deps: UpgradeServiceDeps): UpgradeService {
  const { log, paths, registry, host } = deps;
  const background = new Set<Promise<void>>();
  const cancels = createUpgradeCancels(registry);
  const binaryPaths = async (): Promise<AgentBinaryPaths> =>
    agentBinaryPathsUnder(await resolveHostRoot(paths), paths.machinesDir);
  const recordResult = (operation: Operation) =>
    writeOperationRecord(paths.operationsDir, operation);

  /**
   * Status shows the last finished operation: after the judgement, the
   * newest record on disk is it (often the upgrade this start just judged).
   * Only status reads it, so a record that cannot be read is logged and the
   * start goes on.
   */
  const rememberLastRecord = async () => {
    try {
      const { records, unreadable } = await listOperationRecords(paths.operationsDir);
      for (const error of unreadable) log.warn({ err: error }, 'an operation record is unreadable');
      if (records[0] !== undefined) registry.remember(records[0]);
    } catch (error) {
      log.warn(
        { err: error },
        'could not list the operation records; status shows no last operation',
      );
    }
  };

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

  // After the lock is released. The restart also starts the upgrade guard
  // (the agent unit wants it), which rolls back a candidate that never comes
  // up, even if this process is gone by then.
  const handOver = async (id: string) => {
    await deps.restart.scheduleRestart(`AgentUpgrade ${id}`);
  };

  /** Marks an upgrade that failed before the restart (or during it) and records a failure. */
  const recordFailure = async (id: string, error: unknown) => {
    const state = registry.get(id)?.state === 'restarting' ? 'restarting' : 'failed';
    // The end goes into the registry as into the record: `operations ID` and
    // `status` ask the registry while this daemon runs, and showed a failed
    // (or cancelled) upgrade without when it ended.
    const finishedAt = host.wallClock().toISOString();
    registry.update(id, {
      state,
      message: messageOf(error),
      phase: state === 'failed' ? 'failed' : 'restarting',
      // The code tells the CLI what happened (refused, fetch failed, cancelled)
      // and so its exit code; a restart that failed is judged by the next start.
      ...(state === 'failed' ? { fields: { ...failureFields(error), finishedAt } } : {}),
    });
    log.error({ err: error, opId: id }, 'AgentUpgrade failed');
    // The rollback restored the links; a machine copy it could not restore is synced from here on.
    deps.machineCopy.keep();
    const finished = registry.get(id);
    if (state === 'failed' && finished !== undefined) {
      await recordResult(finished).catch((recordError: unknown) => {
        log.error({ err: recordError, opId: id }, 'could not record the failed AgentUpgrade');
      });
    }
  };

  /** Runs an accepted upgrade to its end in the background; drain() awaits it. */
  const finishInBackground = (id: string, done: Promise<void>): Promise<void> => {
    const task = done
      .then(() => handOver(id))
      .catch((error: unknown) => recordFailure(id, error))
      .finally(() => {
        // Once it ended, a cancel is refused rather than waited on.
        cancels.close(id);
        background.delete(task);
      });
    background.add(task);
    return task;
  };

  return {
    begin: async (request) => {
      const source = parseUpgradeSource(request.source);
      await precheckUpgradeSource(source, deps.candidateTrust ?? hostCandidateTrust);
      const layout = await binaryPaths();
      const { admitted, done } = await deps.queue.start(
        'an AgentUpgrade',
        (upgrade: Admitted) => stage(upgrade, source, layout),
        () => admit(source, layout),
      );
      const { id } = admitted.operation;
      cancels.track(id, finishInBackground(id, done));
      return admitted.operation;
    },
    get: (id) => describeOperation(paths, registry, id),
    judgeAtStart: async (stopped, options = {}) => {
      const layout = await binaryPaths();
      const runningExecutable = await host.runningExecutable();
      const outcome = await deps.queue.runWhenFree(
        'judging the AgentUpgrade',
        () =>
          judgeStartedUpgrade({
            paths: layout,
            signalFile: paths.signalFile,
            instanceId: daemonInstanceId,
            runningExecutable,
            log: log.child({ op: 'judge-agent-upgrade' }),
            recordResult,
            scheduleRestart: () => deps.restart.scheduleRestart('roll back to last-good'),
            now: () => host.wallClock(),
            startupFailure: options.startupFailure,
            ...(options.onNote === undefined ? {} : { onNote: options.onNote }),
          }),
        { signal: stopped },
      );
      await rememberLastRecord();
      return outcome;
    },
    recover: async (message) => {
      const layout = await binaryPaths();
      const result = await deps.queue.run('an AgentUpgrade recovery', () =>
        recoverAgentUpgrade(
          layout,
          paths.signalFile,
          message,
          log.child({ op: 'recover-agent-upgrade' }),
        ),
      );
      if (result.machineCopy !== undefined) deps.machineCopy.keep(result.machineCopy.machine);
      const running = await host.runningExecutable();
      if (result.rolledBack && result.current !== running)
        await deps.restart.scheduleRestart('recovered to last-good');
      const response: RecoveryResponse = {
        recovered: result.rolledBack,
        message: result.rolledBack ? 'restored the last-good binary' : 'no AgentUpgrade to recover',
      };
      if (result.current !== undefined) response.current = result.current;
      return response;
    },
    cancel: async (id) => {
      await cancels.cancel(id);
      const operation = registry.get(id);
      if (operation === undefined) throw new Error(`operation ${id} vanished after its cancel`);
      return operation;
    },
    keepMachineCopy: () => {
      deps.machineCopy.keep();
    },
    machineCopyView: () => deps.machineCopy.view(),
    drain: async () => {
      await Promise.allSettled([...background]);
      await deps.machineCopy.stop();
    },
  };
}

/** The code and hint an upgrade that failed before its restart is recorded with. */
function failureFields(error: unknown): Pick<Operation, 'code' | 'hint'> {
  if (!isAgentError(error)) return { code: 'INTERNAL' };
  return error.hint === undefined ? { code: error.code } : { code: error.code, hint: error.hint };
}
