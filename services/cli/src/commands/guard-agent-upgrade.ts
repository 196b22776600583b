import { readUpgradeSignal, recoverAgentUpgrade } from '@aks-flex-node/agentbinary';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { AgentError, createLogger, messageOf, type Logger } from '@aks-flex-node/log';
import { createSystemctl, type Systemctl } from '@aks-flex-node/systemd';
import { parseCommandArgs } from '../args.js';
import { withLockWhenFree } from '../lock-when-free.js';
import { recoveryLayout } from '../recovery-layout.js';

/** How long a candidate has, from the switch, to judge itself healthy before the guard rolls it back. */
export const defaultGuardDeadlineSeconds = 10;

/**
 * `aks-flex-node guard-agent-upgrade --operation ID [--deadline-seconds N]`
 * (hidden). The daemon starts it from the **last-good** binary, outside the
 * agent unit, right before it restarts into a candidate. It does not depend
 * on the candidate's code: when the candidate has not judged itself healthy
 * by the deadline, or the agent unit shows it crashed, the guard restores
 * last-good and restarts the agent at once, without waiting for systemd's
 * restart delay or start limit.
 */
export async function runGuardAgentUpgrade(args: string[]): Promise<number> {
  const flags = parseCommandArgs('guard-agent-upgrade', args, {
    operation: { type: 'string' },
    'deadline-seconds': { type: 'string', default: String(defaultGuardDeadlineSeconds) },
  });
  const operationId = flags.operation;
  const deadlineSeconds = Number(flags['deadline-seconds']);
  if (operationId === undefined || !Number.isFinite(deadlineSeconds) || deadlineSeconds <= 0) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      'guard-agent-upgrade needs --operation ID and a positive --deadline-seconds',
    );
  }
  const log = createLogger({ bindings: { role: 'upgrade-guard', opId: operationId } });
  const systemctl = createSystemctl({ log, timeoutMs: 10_000 });
  const reason = await watchCandidate(operationId, deadlineSeconds * 1000, systemctl, log);
  if (reason === undefined) {
    log.info('the upgraded daemon judged the AgentUpgrade; the guard is done');
    return 0;
  }
  await rollBack(reason, systemctl, log);
  return 0;
}

/** Watches until the signal for this operation is gone (undefined) or a reason to roll back appears. */
async function watchCandidate(
  operationId: string,
  deadlineMs: number,
  systemctl: Systemctl,
  log: Logger,
) {
  const startedAt = Date.now();
  for (;;) {
    const signal = await readUpgradeSignal(hostPaths.signalFile);
    if (signal?.operationName !== operationId) return undefined;
    const sinceSwitch =
      signal.switchedAt === undefined
        ? Date.now() - startedAt
        : Date.now() - Date.parse(signal.switchedAt);
    // Before the daemon restarted, the unit may be busy with the planned restart; only a crash counts.
    const state = await systemctl.unitState(unitNames.agent).catch((error: unknown) => {
      log.warn({ err: error }, 'could not read the agent unit state; relying on the deadline');
      return { activeState: 'unknown', subState: 'unknown' };
    });
    if (state.activeState === 'failed' || state.subState === 'auto-restart') {
      return `the upgraded daemon exited (${state.activeState}/${state.subState}) ${Math.round(sinceSwitch / 100) / 10}s after the switch`;
    }
    if (sinceSwitch > deadlineMs) {
      return `the upgraded daemon did not report itself healthy within ${deadlineMs / 1000}s of the switch`;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function rollBack(reason: string, systemctl: Systemctl, log: Logger): Promise<void> {
  log.warn({ reason }, 'rolling the AgentUpgrade back to the last-good binary');
  const layout = await recoveryLayout();
  const result = await withLockWhenFree(log, 'the upgrade guard', () =>
    recoverAgentUpgrade(layout, hostPaths.signalFile, `${reason}; restored last-good binary`, log),
  );
  // A planned restart still counts toward the start limit; clear it first (best effort: SELinux may deny it).
  await systemctl.resetFailed(unitNames.agent).catch((error: unknown) => {
    log.warn(
      { err: messageOf(error) },
      'could not reset the agent unit failure counter; restarting anyway',
    );
  });
  await systemctl.restartNoBlock(unitNames.agent);
  log.warn({ current: result.current }, 'restored the last-good binary and restarted the agent');
}
