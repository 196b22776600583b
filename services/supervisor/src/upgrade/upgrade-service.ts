import {
  daemonInstanceId,
  judgeStartedUpgrade,
  listOperationRecords,
  recoverAgentUpgrade,
  writeOperationRecord,
  type JudgeOutcome,
} from '@aks-flex-node/agentbinary';
import type { MachineCopyStatus, Operation, RecoveryResponse } from '@aks-flex-node/api';
import { isAgentError, messageOf } from '@aks-flex-node/log';
import { describeOperation } from './describe-operation.js';
import type { MachineCopyKeeper } from './machine-copy-keeper.js';
import { createUpgradeCancels } from './operation-registry.js';
import type { RestartExecutor } from './restart-executor.js';
import {
  binaryPathsOf,
  createUpgradeRequests,
  type UpgradeRequests,
  type UpgradeRequestsDeps,
} from './upgrade-requests.js';

/** What the upgrade service needs: what its requests need, and what follows their switch. */
export interface UpgradeServiceDeps extends Omit<UpgradeRequestsDeps, 'cancels' | 'finish'> {
  restart: RestartExecutor;
  /** Syncs the machine's copy of the agent an upgrade or rollback could not write. */
  machineCopy: MachineCopyKeeper;
}

/** What a start's judgement is told and tells. */
export interface JudgeAtStartOptions {
  startupFailure?: string | undefined;
  onNote?: (note: string) => void;
}

/**
 * AgentUpgrade as the daemon runs it: the requests (upgrade-requests.ts),
 * then what follows the switch, the judgement at start and recovery.
 */
export interface UpgradeService extends UpgradeRequests {
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
   * Checks the active machine's copy of the agent against current, and keeps
   * syncing it while it differs (the start runs it once the signal is judged).
   */
  keepMachineCopy(): void;
  /** Why a machine's copy differs from current, while it does (status shows it). */
  machineCopyView(): MachineCopyStatus | undefined;
  /** Resolves when every background upgrade this process started has finished its part, and the copy's retries have stopped. */
  drain(): Promise<void>;
}

/**
 * Builds the daemon's {@link UpgradeService}. An upgrade's request runs up to
 * the switch in upgrade-requests.ts (`begin`, `admit`, `stage`); once the lock
 * is released, this runs `handOver` (restart into the candidate) or
 * `recordFailure`.
 */
export function createUpgradeService(deps: UpgradeServiceDeps): UpgradeService {
  const { log, paths, registry, host } = deps;
  const background = new Set<Promise<void>>();
  const cancels = createUpgradeCancels(registry);
  const binaryPaths = () => binaryPathsOf(paths);
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

  const requests = createUpgradeRequests({
    paths,
    log,
    queue: deps.queue,
    registry,
    cancels,
    fetchCandidate: deps.fetchCandidate,
    guard: deps.guard,
    checkSpace: deps.checkSpace,
    host,
    candidateTrust: deps.candidateTrust,
    finish: finishInBackground,
  });

  return {
    begin: (request) => requests.begin(request),
    cancel: (id) => requests.cancel(id),
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
