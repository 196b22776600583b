import type { UpgradeSignal } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { AgentError, isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import { resolveIfPresent } from '../resolve-link.js';
import { isNspawnMachine, syncNspawnCopy, type NspawnMachine } from '../nspawn/nspawn-copy.js';
import { mayHaveSwitched, upgradeStateOf } from './upgrade-state.js';

/** A machine's copy of the agent that could not be made equal to `current`. */
export interface MachineCopyFailure {
  machine: NspawnMachine;
  /** Why, with the path and the repair (`hint`). */
  error: AgentError;
}

/** What a rollback did. */
export interface RollbackResult {
  rolledBack: boolean;
  /** Where `current` resolves afterwards. */
  current: string | undefined;
  /** Set when the links were restored but the active machine's copy was not. */
  machineCopy?: MachineCopyFailure;
}

/**
 * Points `current` back at last-good when the signal's state shows the
 * switch may have happened ({@link mayHaveSwitched}: switched, committed, or
 * failed after a possible switch). Otherwise it does nothing: a host whose
 * switch never happened is never downgraded. Idempotent; the caller keeps the signal
 * until it succeeded, so a failed rollback is retried.
 *
 * Throws UPGRADE_FAILED when last-good cannot be resolved.
 */
export async function rollbackUpgradeFiles(
  paths: AgentBinaryPaths,
  signal: UpgradeSignal | undefined,
  log: Logger,
): Promise<RollbackResult> {
  const current = await resolveIfPresent(paths.current);
  const state = await upgradeStateOf(paths, signal);
  if (state.kind === 'none' || !mayHaveSwitched(state)) return { rolledBack: false, current };
  const { activeMachine } = state.signal;
  const lastGood = await resolveIfPresent(paths.lastGood);
  if (lastGood === undefined) {
    throw new AgentError(
      'UPGRADE_FAILED',
      `resolve last-good agent binary ${paths.lastGood}: it is missing or dangling`,
      {
        path: paths.lastGood,
        hint: 'reinstall the agent with `aks-flex-node start` from a known-good release',
      },
    );
  }
  if (current !== lastGood) {
    await replaceSymlinkAtomic(paths.current, lastGood);
    log.info({ current: lastGood, from: current }, 'pointed current back at the last-good binary');
  }
  failpoint(failpoints.rollbackCurrentRestored);
  if (!isNspawnMachine(activeMachine)) return { rolledBack: true, current: lastGood };
  // The links are the agent, and they are restored: a copy that cannot be
  // written (a read-only mount, an immutable file) is reported beside the
  // result, never a rollback undone or failed, so the node runs last-good
  // and takes changes while the copy is repaired and retried.
  try {
    await syncNspawnCopy(paths.machinesDir, activeMachine, lastGood, log);
    return { rolledBack: true, current: lastGood };
  } catch (error) {
    const failure = toAgentError(error);
    log.error(
      { err: failure, machine: activeMachine },
      "rolled back to last-good, but the machine's copy of the agent still differs from it",
    );
    return {
      rolledBack: true,
      current: lastGood,
      machineCopy: { machine: activeMachine, error: failure },
    };
  }
}

function toAgentError(error: unknown): AgentError {
  return isAgentError(error)
    ? error
    : new AgentError('HOST_ROOT_IO', messageOf(error), { cause: error });
}
