import {
  agentBinaryPathsUnder,
  daemonInstanceId,
  inspectCandidate,
  judgeStartedUpgrade,
  readOperationRecord,
  readUpgradeSignal,
  recoverAgentUpgrade,
  stageAndSwitch,
  writeOperationRecord,
  type AgentBinaryPaths,
  type JudgeOutcome,
} from '@aks-flex-node/agentbinary';
import type { AgentUpgradeRequest, Operation, RecoveryResponse } from '@aks-flex-node/api';
import { resolveHostRoot } from '@aks-flex-node/hostroot';
import type { HostPaths } from '@aks-flex-node/layout';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { Host } from '@aks-flex-node/systemd';
import type { MutationQueue } from '../mutation-queue.js';
import type { ArchiveHandler } from './archive-handler.js';
import { refuseRunningSlot } from './refuse-running-slot.js';
import { createUpgradeCancels } from './upgrade-cancels.js';
import type { OperationRegistry } from './operation-registry.js';
import type { RestartExecutor } from './restart-executor.js';

/** What the upgrade service needs. */
export interface UpgradeServiceDeps {
  paths: HostPaths;
  log: Logger;
  queue: MutationQueue;
  registry: OperationRegistry;
  restart: RestartExecutor;
  archives: ArchiveHandler;
  /** Runs before anything is written; refuses an upgrade the host must not take (legacy seed). */
  guard: () => Promise<void>;
  host: Pick<Host, 'runningExecutable' | 'wallClock'>;
}

/** AgentUpgrade as the daemon runs it: begin, report, judge at start, recover. */
export interface UpgradeService {
  begin(request: AgentUpgradeRequest): Promise<Operation>;
  get(id: string): Promise<Operation | undefined>;
  judgeAtStart(): Promise<JudgeOutcome>;
  recover(message: string | undefined): Promise<RecoveryResponse>;
  /**
   * Cancels an upgrade that has not begun to switch and resolves with it once
   * it has stopped. Throws NOT_FOUND, OPERATION_NOT_CANCELLABLE.
   */
  cancel(id: string): Promise<Operation>;
  /** Resolves when every background upgrade this process started has finished its part. */
  drain(): Promise<void>;
}

/** Builds the daemon's {@link UpgradeService}. */
export function createUpgradeService(deps: UpgradeServiceDeps): UpgradeService {
  const { log, paths, registry, host } = deps;
  const background = new Set<Promise<void>>();
  const cancels = createUpgradeCancels(registry);
  const binaryPaths = async (): Promise<AgentBinaryPaths> =>
    agentBinaryPathsUnder(await resolveHostRoot(paths));
  const recordResult = (operation: Operation) =>
    writeOperationRecord(paths.operationsDir, operation);

  const runStaged = async (
    id: string,
    source: ReturnType<ArchiveHandler['parse']>,
    layout: AgentBinaryPaths,
    signal: AbortSignal,
  ) => {
    const opLog = log.child({ op: 'agent-upgrade', opId: id });
    const result = await stageAndSwitch({
      paths: layout,
      signalFile: paths.signalFile,
      operationId: id,
      redactedUrl: source.redactedUrl,
      log: opLog,
      guard: async () => {
        await deps.guard();
        // Under the lock: the paths were resolved before it was taken, and a
        // move in between would leave them naming files the units no longer run.
        await refuseMovedRoot(layout, await resolveHostRoot(paths));
        await refuseRunningSlot(layout, await host.runningExecutable());
      },
      fetchArchive: () =>
        deps.archives.fetch(
          source,
          (progress) => {
            registry.update(id, { ...progress });
          },
          signal,
        ),
      signal,
      installMember: (archivePath, slot) => deps.archives.install(source, archivePath, slot),
      inspectCandidate: (slot) => inspectCandidate(slot, paths),
      onPhase: (phase) => {
        registry.update(id, { phase });
      },
      now: () => host.wallClock(),
    });
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
    registry.update(id, {
      state,
      message: messageOf(error),
      phase: state === 'failed' ? 'failed' : 'restarting',
    });
    log.error({ err: error, opId: id }, 'AgentUpgrade failed');
    const finished = registry.get(id);
    if (state === 'failed' && finished !== undefined) {
      await recordResult({ ...finished, finishedAt: host.wallClock().toISOString() }).catch(
        (recordError: unknown) => {
          log.error({ err: recordError, opId: id }, 'could not record the failed AgentUpgrade');
        },
      );
    }
  };

  /** Runs an accepted upgrade to its end in the background; drain() awaits it. */
  const runInBackground = (id: string, done: Promise<void>): Promise<void> => {
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
      const source = deps.archives.parse(request.source);
      await deps.archives.precheck?.(source);
      await refusePendingUpgrade(paths.signalFile);
      const layout = await binaryPaths();
      const operation = registry.create(source.redactedUrl);
      const signal = cancels.open(operation.id);
      const { done } = await deps.queue
        .start('an AgentUpgrade', () => runStaged(operation.id, source, layout, signal))
        .catch((error: unknown) => {
          cancels.close(operation.id);
          throw error;
        });
      cancels.track(operation.id, runInBackground(operation.id, done));
      return operation;
    },
    get: async (id) => {
      const running = registry.get(id);
      if (running !== undefined && running.state !== 'restarting') return running;
      const recorded = await readOperationRecord(paths.operationsDir, id);
      if (recorded !== undefined) return recorded;
      if (running !== undefined) return running;
      return describeSignalled(paths.signalFile, id);
    },
    judgeAtStart: async () => {
      const layout = await binaryPaths();
      const runningExecutable = await host.runningExecutable();
      return deps.queue.runWhenFree('judging the AgentUpgrade', () =>
        judgeStartedUpgrade({
          paths: layout,
          signalFile: paths.signalFile,
          instanceId: daemonInstanceId,
          runningExecutable,
          log: log.child({ op: 'judge-agent-upgrade' }),
          recordResult,
          scheduleRestart: () => deps.restart.scheduleRestart('roll back to last-good'),
          now: () => host.wallClock(),
        }),
      );
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
    drain: async () => {
      await Promise.allSettled([...background]);
    },
  };
}

/** Refuses a switch whose layout was resolved under a root the host root no longer resolves to. */
function refuseMovedRoot(layout: AgentBinaryPaths, resolvedNow: string): Promise<void> {
  if (layout.root === resolvedNow) return Promise.resolve();
  return Promise.reject(
    new AgentError(
      'HOST_ROOT_REFUSED',
      `the host root moved from ${layout.root} to ${resolvedNow} after this upgrade resolved its paths`,
      { path: resolvedNow, hint: 'retry the upgrade: it resolves the host root again' },
    ),
  );
}

/** Refuses a new upgrade while the signal records one that has not been judged. */
async function refusePendingUpgrade(signalFile: string): Promise<void> {
  const pending = await readUpgradeSignal(signalFile);
  if (pending === undefined) return;
  throw new AgentError(
    'ACTIVATION_IN_PROGRESS',
    `an AgentUpgrade is already pending (${pending.operationName})`,
    {
      path: signalFile,
      hint: 'wait for it to finish (see `aks-flex-node status`), then try again',
    },
  );
}

/**
 * An operation the daemon before a restart switched to: only the signal
 * knows it until it is judged, so it reads as restarting, being judged.
 */
async function describeSignalled(signalFile: string, id: string): Promise<Operation | undefined> {
  const signal = await readUpgradeSignal(signalFile);
  if (signal?.operationName !== id) return undefined;
  const inFlight: Operation = {
    id,
    kind: 'agent-upgrade',
    state: 'restarting',
    phase: 'judging',
    startedAt: signal.startedAt ?? '',
  };
  if (signal.sourceUrl !== undefined) inFlight.sourceUrl = signal.sourceUrl;
  return inFlight;
}
