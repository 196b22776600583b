import type { Operation } from '@aks-flex-node/api';
import { writeOperationRecord } from '@aks-flex-node/agentbinary';
import { stopAgentCommand, type HostPaths } from '@aks-flex-node/layout';
import { messageOf, type Logger } from '@aks-flex-node/log';
import {
  describeResetReport,
  readUpgradeForReset,
  refuseUnjudgedUpgrade,
  resetAgent,
  type NetworkEffects,
  type ResetEffects,
  type ResetReport,
} from '@aks-flex-node/reset';
import type { MutationQueue } from '../mutation-queue.js';
import type { OperationRegistry } from '../upgrade/operation-registry.js';

/** `POST /v1/reset` as an operation of this daemon. */
export interface ResetService {
  /** Starts the reset once it holds the activation lock; refuses at once when busy. */
  begin(): Promise<Operation>;
  /** Resolves when a reset under way has recorded its outcome. */
  drain(): Promise<void>;
}

/** What {@link createResetService} needs. */
export interface ResetServiceDeps {
  paths: HostPaths;
  log: Logger;
  queue: MutationQueue;
  registry: OperationRegistry;
  /** systemctl, or undefined when systemd does not run the host. */
  effects: ResetEffects | undefined;
  /** `ip` and `nft`, for the node's network state. */
  network: NetworkEffects;
  /** The units this daemon runs in, which reset leaves for {@link stopDaemon}. */
  runningUnits: readonly string[];
  /** Ends this daemon once the outcome is recorded; never waits for the stop itself. */
  stopDaemon(reason: string): Promise<void>;
  now(): Date;
}

/**
 * Runs the shared reset sweep inside the daemon. The daemon is the agent it
 * resets, so it cannot be stopped first: the queue held for the reset keeps
 * every upgrade, move and activation of this daemon out instead, and the
 * daemon stops itself last. Its outcome is written to the operation record
 * before the terminal event and the stop, so a client whose stream breaks as
 * the daemon goes still reads the result from disk.
 */
export function createResetService(deps: ResetServiceDeps): ResetService {
  const { registry } = deps;
  const running = new Set<Promise<void>>();

  const finish = async (id: string, outcome: Partial<Operation>) => {
    const current = registry.get(id);
    if (current === undefined) return;
    const finished: Operation = { ...current, ...outcome, finishedAt: deps.now().toISOString() };
    await writeOperationRecord(deps.paths.operationsDir, finished);
    const { state, phase, message, removed, keptBinary, finishedAt } = finished;
    registry.update(id, {
      state,
      phase,
      ...(message === undefined ? {} : { message }),
      fields: {
        finishedAt,
        ...(removed === undefined ? {} : { removed }),
        ...(keptBinary === undefined ? {} : { keptBinary }),
      },
    });
  };

  const succeed = async (id: string, report: ResetReport) => {
    await finish(id, {
      state: 'succeeded',
      phase: 'done',
      message: describeReset(report),
      removed: report.removed,
      ...(report.left.length === 0 ? {} : { left: report.left }),
      ...(report.keptBinary === undefined ? {} : { keptBinary: report.keptBinary }),
    });
    // The reset is done and recorded, and the client may have read it: a
    // stop that cannot be queued is this daemon's own trouble, not the
    // reset's, and must not rewrite the record as failed (nor write under
    // /var/lib/aks-flex-node while uninstall.sh removes it).
    await deps.stopDaemon(`reset ${id}`).catch((error: unknown) => {
      deps.log.error(
        {
          err: error,
          op: 'reset',
          opId: id,
          hint: `stop it with \`${stopAgentCommand}\``,
        },
        'the reset succeeded, but this daemon could not queue its own stop; it keeps serving the reset host',
      );
    });
  };

  const fail = async (id: string, error: unknown) => {
    deps.log.error({ err: error, op: 'reset', opId: id }, 'reset failed');
    // The daemon keeps running: its units may be half gone, and a second reset finishes the job.
    await finish(id, { state: 'failed', phase: 'failed', message: messageOf(error) });
  };

  return {
    begin: async () => {
      const operation = registry.create(undefined, 'reset');
      const opLog = deps.log.child({ op: 'reset', opId: operation.id });
      let done: Promise<void>;
      try {
        // The outcome is recorded and the stop queued inside the locked work,
        // so no other mutation of this daemon can start on the reset host in
        // between. The admission refuses an unjudged upgrade under the same
        // hold of the lock (409 at once, not a reset that fails once
        // accepted); the sweep checks again, as the offline reset does.
        const admit = async () => {
          refuseUnjudgedUpgrade(await readUpgradeForReset(deps.paths.signalFile, opLog));
        };
        ({ done } = await deps.queue.start(
          'a reset',
          async () => {
            const report = await resetAgent({
              paths: deps.paths,
              effects: deps.effects,
              network: deps.network,
              log: opLog,
              runningUnits: deps.runningUnits,
              onPhase: (phase) => {
                registry.update(operation.id, { phase });
              },
            });
            await succeed(operation.id, report);
          },
          admit,
        ));
      } catch (error) {
        registry.update(operation.id, {
          state: 'failed',
          phase: 'refused',
          message: messageOf(error),
        });
        throw error;
      }
      const task = done
        .catch((error: unknown) => fail(operation.id, error))
        .catch((error: unknown) => {
          opLog.error({ err: error }, 'could not record the reset outcome');
        })
        .finally(() => running.delete(task));
      running.add(task);
      return operation;
    },
    drain: async () => {
      await Promise.all(running);
    },
  };
}

/** One sentence for the operation record and the CLI. */
export function describeReset(report: ResetReport): string {
  return describeResetReport(report);
}
