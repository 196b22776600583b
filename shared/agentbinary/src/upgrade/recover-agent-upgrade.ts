import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import type { Logger } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import { convergeCurrentLink } from './converge-current.js';
import { rollbackUpgradeFiles, type RollbackResult } from './stage-and-switch.js';
import { settleUpgradeState, writeUpgradeSignal } from './upgrade-state.js';

/** The message recorded when the caller gives none. */
export const defaultRecoveryMessage = 'upgraded daemon failed to start; restored last-good binary';

/**
 * Records that the upgraded daemon failed and restores last-good, as the
 * recovery unit (through last-good's `recover-agent-upgrade`), the upgrade
 * guard and `POST /v1/recovery` ask. A corrupt signal is set aside first.
 * With no signal there is no upgrade to recover: an ordinary failure never
 * changes the selected binary, except that a `current` that cannot run at
 * all is pointed at last-good. The caller holds the activation lock.
 *
 * Throws NOT_EXECUTABLE (with the repair command) when neither runs.
 */
export async function recoverAgentUpgrade(
  paths: AgentBinaryPaths,
  signalFile: string,
  message: string | undefined,
  log: Logger,
): Promise<RollbackResult> {
  const state = await settleUpgradeState({ paths, signalFile, log, now: () => new Date() });
  if (state.kind === 'none') {
    // No upgrade to undo, but the agent cannot start at all while `current`
    // cannot run: the one repair that changes no binary that runs.
    const converged = await convergeCurrentLink(paths, log);
    if (converged.kind === 'repointed') return { rolledBack: true, current: converged.current };
    log.info({ signal: signalFile }, 'no AgentUpgrade is pending; nothing to recover');
    return { rolledBack: false, current: converged.current };
  }
  const failure =
    message?.trim() === undefined || message.trim() === ''
      ? defaultRecoveryMessage
      : message.trim();
  // Whatever the state (recorded, staged, switched, committed or failed),
  // recovery means last-good: recorded before the files change, so a crash
  // after this is finished by the next start.
  const { signal } = state;
  const recorded = {
    ...signal,
    failure: state.kind === 'failed' ? state.failure : failure,
    recoveryRequired: true,
  };
  await writeUpgradeSignal(signalFile, recorded);
  failpoint(failpoints.rollbackFailureRecorded);
  const result = await rollbackUpgradeFiles(paths, recorded, log);
  log.warn(
    { operation: signal.operationName, current: result.current, failure },
    'recovered from a failed AgentUpgrade',
  );
  return result;
}
