import { readdir, readFile } from 'node:fs/promises';
import {
  convergeCurrentLink,
  inspectAgentLink,
  readUpgradeState,
  recoverAgentUpgrade,
  settleUpgradeState,
  type AgentBinaryPaths,
  type ReadUpgradeState,
  createHost,
  type Host,
} from '@aks-flex-node/agentbinary';
import { createApiClient, exitCodeFor, exitCodes } from '@aks-flex-node/api';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { pollUntil } from '@aks-flex-node/fs';
import {
  AgentError,
  createLogger,
  errnoCode,
  isAgentError,
  isNotFound,
  messageOf,
  type Logger,
} from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { withLockWhenFree } from '../lock-when-free.js';
import {
  candidateLimits,
  type CandidateLimits,
  parseCpuUsage,
  parseProcessStat,
  processTreeCpu,
  type ProcessCpu,
  seconds,
  watchVerdict,
} from './candidate-verdict.js';
import { ownExecutable, recoveryLayout } from '../recovery-layout.js';
import { writeUnitsBeforeRestart } from '../units-before-restart.js';

/**
 * How long a started candidate has to judge itself healthy before the guard
 * rolls it back; the other limits of the watch are in candidate-verdict.ts.
 */
export const defaultGuardDeadlineSeconds = candidateLimits.judgeMs / 1000;

/** How long one probe of the socket may wait for an answer; the poll repeats it. */
const serveProbeTimeoutMs = 500;

/**
 * `aks-flex-node guard-agent-upgrade [--deadline-seconds N]` (hidden), run by
 * `aks-flex-node-upgrade-guard.service`, which the agent unit pulls in at
 * every start, through the **last-good** link. It does not depend on the
 * candidate's code. With no switched upgrade pending it exits at once.
 * Otherwise, when the agent unit shows the candidate crashed, or it has not
 * judged itself healthy within the deadline of this start, the guard
 * restores last-good and restarts the agent at once, without waiting for
 * systemd's restart delay or start limit.
 */
export async function runGuardAgentUpgrade(args: string[]): Promise<number> {
  const flags = parseCommandArgs('guard-agent-upgrade', args, {
    'deadline-seconds': { type: 'string', default: String(defaultGuardDeadlineSeconds) },
  });
  const deadlineSeconds = Number(flags['deadline-seconds']);
  if (!Number.isFinite(deadlineSeconds) || deadlineSeconds <= 0) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `--deadline-seconds ${flags['deadline-seconds']} is not a positive number`,
    );
  }
  const log = createLogger({ bindings: { role: 'upgrade-guard' } });
  try {
    await guardPendingUpgrade(deadlineSeconds, log);
    return exitCodes.ok.code;
  } catch (error) {
    throw asGuardFailure(error);
  }
}

/**
 * A guard that fails exits with the upgrade-failed status (6), never 1 or 2:
 * its unit counts those as success, because they are what a last-good
 * without this command exits with (a Go release says "unknown command" with
 * 1, an older release of ours with the usage status 2). A failed guard must
 * fail its unit, so that the unit's OnFailure= runs the recovery unit.
 */
function asGuardFailure(error: unknown): AgentError {
  if (isAgentError(error) && exitCodeFor(error.code) === exitCodes.rolledBack.code) return error;
  return new AgentError(
    'UPGRADE_FAILED',
    `the upgrade guard could not finish: ${messageOf(error)}`,
    {
      ...(isAgentError(error) && error.path !== undefined ? { path: error.path } : {}),
      cause: error,
      // The cause's own hint first: for a host with no runnable binary it is the one repair command.
      hint: `${isAgentError(error) && error.hint !== undefined ? `${error.hint}; ` : ''}systemd starts the guard again, and the recovery unit restores last-good if it keeps failing; see \`journalctl -u aks-flex-node-upgrade-guard\``,
    },
  );
}

/** Watches a switched, unjudged upgrade, if there is one, and rolls it back when it fails. */
async function guardPendingUpgrade(deadlineSeconds: number, log: Logger): Promise<void> {
  const host = createHost({ log, timeoutMs: 10_000 });
  const layout = await recoveryLayout(await ownExecutable(host));
  await convergeDamage(layout, host, log);
  const watched = watchedOperation(await readUpgradeState(layout, hostPaths.signalFile));
  if (watched === undefined) return;
  log.info({ operation: watched, current: layout.current }, 'watching the upgraded daemon');
  const reason = await watchCandidate(watched, deadlineSeconds * 1000, layout, host, log);
  if (reason === undefined) {
    log.info({ operation: watched }, 'the upgraded daemon was judged; the guard is done');
    return;
  }
  await rollBack(reason, layout, host, log);
}

/**
 * The guard runs through last-good at every agent start, so it is the one
 * process that still runs when the agent cannot. A `current` that cannot run
 * is pointed at last-good and the agent restarted at once, rather than after
 * five failed starts 30 s apart and the recovery unit. A corrupt signal is
 * set aside here only when it must be: with current on a slot other than
 * last-good, so that the rebuilt signal has the guard watch that binary's
 * start below, or with current unable to run. Otherwise the daemon that
 * starts sets it aside itself, and says so in `status`. Only under the lock,
 * and only when the cheap look without it shows damage.
 */
async function convergeDamage(layout: AgentBinaryPaths, host: Host, log: Logger): Promise<void> {
  const signal = await readUpgradeState(layout, hostPaths.signalFile);
  const current = await inspectAgentLink(layout.current);
  // Neither link exists: no agent is installed in this layout (the guard run
  // by hand, or from a unit a reset left), so there is nothing to converge
  // and no binary to call missing.
  if (current.kind === 'missing' && (await inspectAgentLink(layout.lastGood)).kind === 'missing') {
    return;
  }
  if (current.kind === 'runnable') {
    if (signal.kind !== 'corrupt') return;
    const lastGood = await inspectAgentLink(layout.lastGood);
    if (lastGood.kind !== 'runnable' || lastGood.target === current.target) {
      log.info(
        { path: hostPaths.signalFile, reason: signal.reason },
        'the AgentUpgrade signal is corrupt; the starting daemon sets it aside',
      );
      return;
    }
  }
  const converged = await withLockWhenFree(log, 'the upgrade guard', async () => {
    await settleUpgradeState({
      paths: layout,
      signalFile: hostPaths.signalFile,
      log,
      now: () => host.wallClock(),
    });
    return convergeCurrentLink(layout, log);
  });
  if (converged.kind !== 'repointed') return;
  await writeUnitsBeforeRestart(layout, host.systemctl, log);
  await host.systemctl.resetFailed(unitNames.agent).catch((error: unknown) => {
    log.warn({ err: error }, 'could not reset the agent unit failure counter; restarting anyway');
  });
  await host.systemctl.restartNoBlock(unitNames.agent);
  log.warn({ current: converged.current }, 'restarted the agent from the last-good binary');
}

/**
 * The operation whose switched, unjudged candidate `current` still names, or
 * undefined. Once `current` names last-good again, a rollback already
 * happened and the last-good daemon finishes the record: acting again would
 * only restart it. A corrupt signal has nothing switched to watch: the
 * starting daemon sets it aside.
 */
function watchedOperation(state: ReadUpgradeState): string | undefined {
  switch (state.kind) {
    case 'none':
    case 'corrupt':
    case 'recorded':
    case 'staged':
    case 'switched':
      // Not committed: the starting daemon judges it, and rolls it back, itself.
      return undefined;
    case 'committed':
      return state.isCandidateCurrent ? state.signal.operationName : undefined;
    case 'failed':
      return state.before === 'committed' && state.isCandidateCurrent
        ? state.signal.operationName
        : undefined;
    default: {
      const unknown: never = state;
      throw new Error(`unknown upgrade state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * The latest the verdict can end a watch: a candidate that answers at its
 * last moment and then has its time to judge itself, the deadline to judge,
 * or one still judging at its limit.
 */
function latestVerdictMs(limits: CandidateLimits): number {
  return Math.max(
    limits.unservedLimitMs + limits.judgeAfterServeMs,
    limits.judgeMs,
    limits.unjudgedLimitMs,
  );
}

/**
 * How long past the verdict's latest the watch's own timeout waits: a
 * loaded host's last looks (a systemctl call, a socket probe, a /proc scan)
 * can each take seconds, and the timeout must not overtake the verdict.
 */
const backstopMarginMs = 6_000;

/**
 * Watches until the operation is judged (undefined) or a reason to roll back
 * appears: the unit shows a crash, or the verdict (candidate-verdict.ts)
 * finds the candidate hung, spinning or past its deadlines.
 */
async function watchCandidate(
  operationId: string,
  judgeMs: number,
  layout: AgentBinaryPaths,
  host: Host,
  log: Logger,
): Promise<string | undefined> {
  const startedAt = host.now();
  const limits = { ...candidateLimits, judgeMs };
  const verdict = watchVerdict(hostPaths.socket, limits);
  let served = false;
  const { reason } = await pollUntil(
    async () => {
      const state = await readUpgradeState(layout, hostPaths.signalFile);
      if (state.kind === 'corrupt') {
        throw new AgentError(
          'UPGRADE_FAILED',
          `the upgrade signal ${hostPaths.signalFile} became corrupt while the guard watched: ${state.reason}`,
          {
            path: hostPaths.signalFile,
            hint: 'restart the agent (`systemctl restart aks-flex-node-agent`): its start sets a corrupt signal aside and judges the current binary',
          },
        );
      }
      if (watchedOperation(state) !== operationId) return { reason: undefined };
      const unit = await host.systemctl.unitState(unitNames.agent).catch((error: unknown) => {
        log.warn({ err: error }, 'could not read the agent unit state; relying on the deadline');
        return { activeState: 'unknown', subState: 'unknown' };
      });
      // A planned restart passes through deactivating and activating; only a crash shows these.
      if (unit.activeState === 'failed' || unit.subState === 'auto-restart') {
        return {
          reason: `the upgraded daemon exited (${unit.activeState}/${unit.subState}) ${seconds(host.now() - startedAt)} after it started`,
        };
      }
      // Probed only while the unit runs: a connection to the socket of a
      // stopped unit would have systemd start it, hiding a crash.
      if (!served && unit.activeState === 'active' && unit.subState === 'running') {
        served = await answersOnSocket();
        if (served) log.info({ operation: operationId }, 'the upgraded daemon answers');
      }
      const reason = verdict({
        elapsedMs: host.now() - startedAt,
        served,
        // Asked after it answers too: past its deadline to judge itself, a
        // candidate is waited for only while it uses CPU, and not too much.
        cpuNs: await agentCpuUsage(host, log),
      });
      return reason === undefined ? undefined : { reason };
    },
    {
      // A backstop only: the verdict ends every watch before it.
      timeoutMs: latestVerdictMs(limits) + backstopMarginMs,
      intervalMs: 250,
      clock: host,
      timedOut: () => ({
        reason: `the upgraded daemon did not report itself healthy within ${seconds(host.now() - startedAt)} of its start`,
      }),
    },
  );
  return reason;
}

/**
 * The CPU the candidate has used so far: the agent unit's cgroup figure, or
 * where systemd does not account it (cgroup v1, and systemd in a container
 * without the cpu controller, as in this project's e2e hosts) that of its
 * main process and the processes below it, from /proc. Undefined when
 * neither can be read.
 */
async function agentCpuUsage(host: Host, log: Logger): Promise<bigint | undefined> {
  try {
    const accounted = parseCpuUsage(await host.systemctl.show(unitNames.agent, ['CPUUsageNSec']));
    if (accounted !== undefined) return accounted;
    const pid = await host.systemctl.mainPid(unitNames.agent);
    return pid === 0 ? undefined : processTreeCpu(await readProcesses(), pid);
  } catch (error) {
    log.warn({ err: error }, 'could not read the CPU use of the agent; relying on the deadline');
    return undefined;
  }
}

/** Every process's parent and CPU, from /proc. */
async function readProcesses(): Promise<ProcessCpu[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(
    pids.map((pid) =>
      readFile(`/proc/${pid}/stat`, 'utf8').then(parseProcessStat, (error: unknown) => {
        // Gone between the listing and the read: it is no part of the candidate's CPU any more.
        if (isNotFound(error) || errnoCode(error) === 'ESRCH') return undefined;
        throw error;
      }),
    ),
  );
  return stats.filter((stat) => stat !== undefined);
}

/**
 * Whether anything answers `GET /v1/status` on the agent's socket: an answer
 * of any kind (an error status, a body the schema refuses) is a daemon that
 * serves; only no answer within the probe's timeout is not.
 */
async function answersOnSocket(): Promise<boolean> {
  try {
    await createApiClient({
      socketPath: hostPaths.socket,
      timeoutMs: serveProbeTimeoutMs,
    }).status();
    return true;
  } catch (error) {
    return !isAgentError(error, 'DAEMON_UNREACHABLE');
  }
}

async function rollBack(
  reason: string,
  layout: AgentBinaryPaths,
  host: Host,
  log: Logger,
): Promise<void> {
  log.warn({ reason }, 'rolling the AgentUpgrade back to the last-good binary');
  const { systemctl } = host;
  const result = await withLockWhenFree(log, 'the upgrade guard', () =>
    recoverAgentUpgrade(layout, hostPaths.signalFile, `${reason}; restored last-good binary`, log),
  );
  // Nothing was undone: while the guard waited for the lock the daemon
  // judged the upgrade (a success it keeps, or a failure it rolled back and
  // restarted from itself), or nothing was left to undo. Restarting now
  // would only cut the kubelet's credential for nothing.
  if (!result.rolledBack) {
    log.info(
      { current: result.current },
      'the AgentUpgrade was settled before the guard took the lock; the agent keeps running',
    );
    return;
  }
  // The agent restarts into last-good: under the units that release expects.
  await writeUnitsBeforeRestart(layout, systemctl, log);
  // A planned restart still counts toward the start limit; clear it first (best effort: SELinux may deny it).
  await systemctl.resetFailed(unitNames.agent).catch((error: unknown) => {
    log.warn({ err: error }, 'could not reset the agent unit failure counter; restarting anyway');
  });
  await systemctl.restartNoBlock(unitNames.agent);
  log.warn({ current: result.current }, 'restored the last-good binary and restarted the agent');
}
