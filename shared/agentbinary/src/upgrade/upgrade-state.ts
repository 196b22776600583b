import type { UpgradeSignal } from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';
import { isSlot, type AgentBinaryPaths } from '../agent-binary-paths.js';
import { resolveIfPresent } from '../resolve-link.js';
import { readSettledSignal, type SettleOptions } from '../signal/settle-corrupt-signal.js';
import { readUpgradeSignal, readUpgradeSignalState } from '../signal/upgrade-signal-file.js';

/**
 * Where an AgentUpgrade stands, decided once from the signal and the
 * `current` link (docs/upgrades.md, "The upgrade's state"). The steps of an
 * upgrade move it forward in this order; a judgement, the guard or recovery
 * move it to `failed`, and a recorded result back to `none`:
 * - `none`: no signal; no upgrade is in flight;
 * - `recorded`: the signal is written but names no candidate slot yet;
 * - `staged`: a slot is chosen and `current` does not name it: nothing the
 *   agent runs changed, so nothing is ever rolled back from here;
 * - `switched`: `current` names the candidate, but `switchCommitted` was not
 *   recorded (killed between the link and the signal);
 * - `committed`: `switchCommitted` is recorded; the candidate awaits its
 *   judgement;
 * - `failed`: a failure is recorded; last-good is restored (when the switch
 *   may have happened) before the result is.
 */
export type UpgradeState =
  | { kind: 'none' }
  | { kind: 'recorded'; signal: UpgradeSignal }
  | { kind: 'staged'; signal: UpgradeSignal; candidate: string }
  | { kind: 'switched'; signal: UpgradeSignal; candidate: string }
  | {
      kind: 'committed';
      signal: UpgradeSignal;
      /** Undefined only in a signal a release wrote without the slot. */
      candidate: string | undefined;
      /** Whether `current` still names the candidate (a hand edit or a rollback may have moved it). */
      isCandidateCurrent: boolean;
    }
  | {
      kind: 'failed';
      signal: UpgradeSignal;
      failure: string;
      /** The state the failure was recorded in: from `switched` on, last-good is restored before the result is recorded. */
      before: 'recorded' | 'staged' | 'switched' | 'committed';
      /** Whether the host must run last-good before the result is recorded (`recoveryRequired`). */
      mustRunLastGood: boolean;
      isCandidateCurrent: boolean;
    };

/** The state, or a signal no release could have meant; only a holder of the activation lock sets such a one aside. */
export type ReadUpgradeState =
  | UpgradeState
  | {
      kind: 'corrupt';
      /** What is wrong with it, for the log and `status`. */
      reason: string;
    };

/**
 * Reads the upgrade's state without changing anything: a corrupt signal is
 * reported as `corrupt`. Throws HOST_ROOT_IO when the signal or `current`
 * exists but cannot be read.
 */
export async function readUpgradeState(
  paths: AgentBinaryPaths,
  signalFile: string,
): Promise<ReadUpgradeState> {
  const state = await readUpgradeSignalState(signalFile);
  switch (state.kind) {
    case 'absent':
      return { kind: 'none' };
    case 'pending':
      return upgradeStateOf(paths, state.signal);
    case 'corrupt':
      return { kind: 'corrupt', reason: state.reason };
    default: {
      const unknown: never = state;
      throw new Error(`unknown signal state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Reads the upgrade's state, setting a corrupt signal aside first (what the
 * links say takes its place). The caller holds the activation lock.
 */
export async function settleUpgradeState(options: SettleOptions): Promise<UpgradeState> {
  return upgradeStateOf(options.paths, await readSettledSignal(options));
}

/**
 * The state a given signal (or none) means beside the `current` link as it
 * is now: the one place that reads `switchCommitted`, `failure` and
 * `recoveryRequired`. Throws HOST_ROOT_IO when `current` cannot be resolved.
 */
export async function upgradeStateOf(
  paths: AgentBinaryPaths,
  signal: UpgradeSignal | undefined,
): Promise<UpgradeState> {
  if (signal === undefined) return { kind: 'none' };
  const candidate = signal.candidatePath === '' ? undefined : signal.candidatePath;
  // Only a slot can be the active candidate: with no candidate recorded and
  // current dangling, both are undefined, and that must not count as active.
  const isCandidateCurrent =
    isSlot(paths, candidate) && (await resolveIfPresent(paths.current)) === candidate;
  const before = stepOf(paths, signal, candidate, isCandidateCurrent);
  if (signal.failure !== undefined) {
    return {
      kind: 'failed',
      signal,
      failure: signal.failure,
      before: before.kind,
      mustRunLastGood: signal.recoveryRequired === true,
      isCandidateCurrent,
    };
  }
  return before;
}

/** How far the upgrade got, leaving any recorded failure aside. */
function stepOf(
  paths: AgentBinaryPaths,
  signal: UpgradeSignal,
  candidate: string | undefined,
  isCandidateCurrent: boolean,
): Exclude<UpgradeState, { kind: 'none' | 'failed' }> {
  if (signal.switchCommitted === true) {
    return { kind: 'committed', signal, candidate, isCandidateCurrent };
  }
  if (candidate === undefined || !isSlot(paths, candidate)) return { kind: 'recorded', signal };
  return isCandidateCurrent
    ? { kind: 'switched', signal, candidate }
    : { kind: 'staged', signal, candidate };
}

/**
 * Whether `current` may name a binary nobody judged, so last-good must be
 * restored before the upgrade ends: a host whose switch never happened is
 * never downgraded.
 */
export function mayHaveSwitched(state: UpgradeState): boolean {
  switch (state.kind) {
    case 'none':
    case 'recorded':
    case 'staged':
      return false;
    case 'switched':
    case 'committed':
      return true;
    case 'failed':
      return state.mustRunLastGood || state.before === 'switched' || state.before === 'committed';
    default: {
      const unknown: never = state;
      throw new Error(`unknown upgrade state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Refuses a new AgentUpgrade while the signal records one that has not been
 * judged. The caller holds the activation lock and keeps it until the new
 * upgrade has written its own signal, so no other upgrade can slip in between
 * the check and the write. Throws ACTIVATION_IN_PROGRESS.
 */
export async function refusePendingUpgrade(signalFile: string): Promise<void> {
  const pending = await readUpgradeSignal(signalFile);
  if (pending === undefined) return;
  throw new AgentError(
    'ACTIVATION_IN_PROGRESS',
    `an AgentUpgrade is already pending (${pending.operationName}); ${signalFile} records it`,
    {
      path: signalFile,
      hint: 'wait for it to finish (see `aks-flex-node status`), then try again',
    },
  );
}
