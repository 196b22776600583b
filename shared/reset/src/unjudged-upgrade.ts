import path from 'node:path';
import {
  readUpgradeSignal,
  resolveIfPresent,
  upgradeResultFromSignal,
  writeOperationRecord,
} from '@aks-flex-node/agentbinary';
import type { UpgradeSignal } from '@aks-flex-node/api';
import { currentLinkFile } from '@aks-flex-node/layout';
import { AgentError, isAgentError, type Logger } from '@aks-flex-node/log';

/**
 * What the upgrade signal means to a reset, decided once (under the
 * activation lock) by {@link readUpgradeForReset}:
 * - `none`: no signal;
 * - `unjudged`: `current` names the candidate of an upgrade nobody has
 *   judged. Only the daemon that starts next, the guard or recovery finish
 *   it, from the signal, so a reset now would leave an unjudged binary as
 *   current with nothing left to judge or roll it back: refused;
 * - `ends`: the signal names an operation, but `current` is a judged binary
 *   (rolled back, or never switched: the stage was interrupted). The reset
 *   ends the operation: it records the end before the signal goes, so a CLI
 *   following it reads how it ended;
 * - `unreadable`: not valid; no daemon can judge from it, and refusing would
 *   leave the host impossible to reset without a hand edit: removed.
 */
export type UpgradeForReset =
  | { kind: 'none' }
  | { kind: 'unjudged'; operationName: string; signalFile: string }
  | { kind: 'ends'; signal: UpgradeSignal }
  | { kind: 'unreadable' };

/** What an operator runs when no daemon judges the upgrade: recovery puts last-good back as current. */
export const recoverBeforeResetCommand =
  'aks-flex-node recover-agent-upgrade --message "rolled back before a reset"';

/**
 * Reads the signal through its one reader and decides what it is to a
 * reset (see {@link UpgradeForReset}). Throws HOST_ROOT_IO when the signal or
 * the `current` link beside its candidate exists but cannot be read.
 */
export async function readUpgradeForReset(
  signalFile: string,
  log: Logger,
): Promise<UpgradeForReset> {
  let signal: UpgradeSignal | undefined;
  try {
    signal = await readUpgradeSignal(signalFile);
  } catch (error) {
    // UPGRADE_FAILED is a file read but not valid; anything else (EACCES,
    // EIO) is passed on, since it may hide a good signal.
    if (!isAgentError(error, 'UPGRADE_FAILED')) throw error;
    log.warn(
      { err: error, path: signalFile },
      'the upgrade signal is not valid, so no daemon can judge from it; the reset removes it',
    );
    return { kind: 'unreadable' };
  }
  if (signal === undefined) return { kind: 'none' };
  if (await isCandidateCurrent(signal)) {
    return { kind: 'unjudged', operationName: signal.operationName, signalFile };
  }
  return { kind: 'ends', signal };
}

/**
 * Whether `current` names the signal's candidate. The candidate slot and
 * `current` share a directory (the resolved root's slot directory, where the
 * upgrade recorded the candidate), so no host root is resolved here.
 */
async function isCandidateCurrent(signal: UpgradeSignal): Promise<boolean> {
  if (signal.candidatePath === undefined || signal.candidatePath === '') return false;
  const current = path.join(path.dirname(signal.candidatePath), path.basename(currentLinkFile));
  return (await resolveIfPresent(current)) === signal.candidatePath;
}

/**
 * Refuses a reset while `upgrade` is unjudged. The caller holds the
 * activation lock through the whole reset, so no upgrade can switch, and no
 * judgement or recovery (which take the same lock) can end one, between the
 * check and the sweep. Throws ACTIVATION_IN_PROGRESS (exit 4, HTTP 409), on
 * which `aks-flex-node reset` waits for the judgement and tries again.
 */
export function refuseUnjudgedUpgrade(upgrade: UpgradeForReset): void {
  if (upgrade.kind === 'unjudged') throw unjudgedUpgradeRefusal(upgrade);
}

/** The refusal for a reset that finds an unjudged upgrade; `waitedMs` when the CLI waited for it first. */
export function unjudgedUpgradeRefusal(
  upgrade: { operationName: string; signalFile: string },
  waitedMs?: number,
): AgentError {
  const waited = waitedMs === undefined ? '' : ` after ${Math.round(waitedMs / 1000)} s`;
  return new AgentError(
    'ACTIVATION_IN_PROGRESS',
    `a reset cannot start now: AgentUpgrade ${upgrade.operationName} has switched to its candidate and is still not judged${waited} (${upgrade.signalFile} records it)`,
    {
      path: upgrade.signalFile,
      hint: `run \`aks-flex-node reset\` again once \`aks-flex-node status\` shows it judged; if no agent runs to judge it, start one (\`systemctl start aks-flex-node-agent\`) or roll it back with \`${recoverBeforeResetCommand}\` first`,
    },
  );
}

/**
 * Records that the reset ended the signal's operation, before the reset
 * removes the signal: the signal is all that knows an unjudged operation,
 * and a CLI following it (`agent-upgrade`) reads this record once no daemon
 * answers. `rolled-back` when a failure was recorded (the files are back on
 * last-good), `failed` when the upgrade never switched.
 */
export async function recordUpgradeEndedByReset(
  operationsDir: string,
  signal: UpgradeSignal,
  now: Date,
): Promise<string> {
  const state = signal.failure === undefined ? 'failed' : 'rolled-back';
  const why = signal.failure ?? 'interrupted before the switch';
  const message = `${why}; ended by a reset before a daemon recorded it`;
  const record = upgradeResultFromSignal(signal, state, message, now);
  // Ended before the switch, nothing changed: to the CLI that followed it, the reset cancelled it.
  if (state === 'failed' && signal.switchedAt === undefined) {
    record.code = 'OPERATION_CANCELLED';
    record.hint =
      'a reset ended it before the switch; run the upgrade again once the node has rejoined';
  }
  await writeOperationRecord(operationsDir, record);
  return path.join(operationsDir, `${record.id}.json`);
}
