/**
 * The AgentUpgrade's state, in one module: the signal file that records it
 * (its read, its atomic write, and this daemon's id in it), a signal that
 * does not parse settled from the links, and the state an upgrade is in,
 * decided once from the signal and the `current` link.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { upgradeSignalSchema, type UpgradeSignal } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import {
  corruptStampOf,
  linkAside,
  makeIoError,
  removeOwned,
  syncDirectory,
  writeFileAtomic,
} from '@aks-flex-node/fs';
import { AgentError, isNotFound, messageOf, type Logger } from '@aks-flex-node/log';
import { isSlot, type AgentBinaryPaths } from '../agent-binary-paths.js';
import { inspectAgentLink } from '../agent-link.js';
import { resolveIfPresent } from '../resolve-link.js';

// The signal file: its read and its atomic write.

/**
 * What the signal file holds: nothing, a pending upgrade, or something no
 * release could have meant (empty, not JSON, torn, the wrong shape). The one
 * reader of the file; callers switch over the kind.
 */
export type UpgradeSignalState =
  | { kind: 'absent' }
  | { kind: 'pending'; signal: UpgradeSignal }
  | {
      kind: 'corrupt';
      /** What is wrong with it, for the log and `status`. */
      reason: string;
      /** The operation id, when the damaged text still names one; the record of that operation is finished with it. */
      salvagedOperation?: string;
    };

/** Reads the signal file's state. Throws HOST_ROOT_IO only when the file cannot be read at all. */
export async function readUpgradeSignalState(file: string): Promise<UpgradeSignalState> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return { kind: 'absent' };
    throw makeIoError('read', file, error);
  }
  if (text.trim() === '') return corrupt('it is empty', text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return corrupt(`it is not valid JSON (${messageOf(error)})`, text);
  }
  const parsed = upgradeSignalSchema.safeParse(json);
  if (!parsed.success) {
    return corrupt(`it is not an upgrade signal (${z.prettifyError(parsed.error)})`, text);
  }
  return { kind: 'pending', signal: withoutEmptyFields(parsed.data) };
}

/**
 * Reads the upgrade signal; undefined when there is none. A corrupt signal is
 * an error, never "no signal": treating it as absent would let a new upgrade
 * overwrite an unfinished one's record. The start, the guard and recovery
 * set a corrupt one aside first ({@link readSettledSignal}).
 */
export async function readUpgradeSignal(file: string): Promise<UpgradeSignal | undefined> {
  const state = await readUpgradeSignalState(file);
  switch (state.kind) {
    case 'absent':
      return undefined;
    case 'pending':
      return state.signal;
    case 'corrupt':
      throw new AgentError(
        'UPGRADE_FAILED',
        `the upgrade signal ${file} is corrupt: ${state.reason}`,
        {
          path: file,
          hint: 'restart the agent (`systemctl restart aks-flex-node-agent`): its start sets a corrupt signal aside and judges the current binary',
        },
      );
    default: {
      const unknown: never = state;
      throw new Error(`unknown signal state ${JSON.stringify(unknown)}`);
    }
  }
}

/** An operation id the torn text still names in full (a closing quote after it), or nothing. */
const salvagePattern = /"operationName"\s*:\s*"([A-Za-z0-9][A-Za-z0-9._-]{0,127})"/;

function corrupt(reason: string, text: string): UpgradeSignalState {
  const salvaged = salvagePattern.exec(text)?.[1];
  return salvaged === undefined
    ? { kind: 'corrupt', reason }
    : { kind: 'corrupt', reason, salvagedOperation: salvaged };
}

/** Writes the signal atomically: compact JSON, one line, mode 0600, empty fields left out. */
export async function writeUpgradeSignal(file: string, signal: UpgradeSignal): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(withoutEmptyFields(signal))}\n`, { mode: 0o600 });
}

/** Reads, changes and writes back the signal. Throws when there is none: nothing may create one by accident. */
export async function updateUpgradeSignal(
  file: string,
  patch: Partial<UpgradeSignal>,
): Promise<UpgradeSignal> {
  const current = await readUpgradeSignal(file);
  if (current === undefined) {
    throw new AgentError('UPGRADE_FAILED', `no pending AgentUpgrade signal at ${file}`, {
      path: file,
    });
  }
  const next = { ...current, ...patch };
  await writeUpgradeSignal(file, next);
  return next;
}

/** Removes the signal; no signal is fine. */
export async function clearUpgradeSignal(file: string): Promise<void> {
  await removeOwned(file);
}

function withoutEmptyFields(signal: UpgradeSignal): UpgradeSignal {
  const entries = Object.entries(signal).filter(
    ([, value]) => value !== undefined && value !== '' && value !== false,
  );
  return Object.fromEntries(entries) as UpgradeSignal;
}

/**
 * This process's daemon instance id: 16 random bytes in hex, new for every
 * process. The daemon that writes a signal must not judge it; the restarted
 * one, with another id, does.
 */
export const daemonInstanceId: string = randomBytes(16).toString('hex');

// A corrupt signal, set aside and settled from the links.

/** What setting a corrupt signal aside did, for the log and `status`. */
export interface CorruptSignalSetAside {
  /** Where the damaged file is kept, for whoever wants to read it. */
  setAsideAs: string;
  reason: string;
  /** The signal written in its place (current is to be judged again), or undefined when none was. */
  rebuilt: UpgradeSignal | undefined;
}

/** What {@link readSettledSignal} needs; the caller holds the activation lock. */
export interface SettleOptions {
  paths: AgentBinaryPaths;
  signalFile: string;
  log: Logger;
  now: () => Date;
  /** Told when a corrupt signal was set aside (the daemon shows it in `status`). */
  onSetAside?: (setAside: CorruptSignalSetAside) => void;
}

/**
 * Reads the signal, setting a corrupt one aside first: the daemon's start,
 * the upgrade guard and `recover-agent-upgrade` all read it through here, so
 * none of them loops on a file no release could have meant. Returns the
 * pending signal (possibly the one rebuilt from the links), or undefined.
 */
export async function readSettledSignal(
  options: SettleOptions,
): Promise<UpgradeSignal | undefined> {
  const state = await readUpgradeSignalState(options.signalFile);
  switch (state.kind) {
    case 'absent':
      return undefined;
    case 'pending':
      return state.signal;
    case 'corrupt': {
      const setAside = await setAsideCorruptSignal(options, state.reason, state.salvagedOperation);
      options.onSetAside?.(setAside);
      return setAside.rebuilt;
    }
    default: {
      const unknown: never = state;
      throw new Error(`unknown signal state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Keeps the corrupt file under `<signal>.corrupt-<UTC time>`, then puts in
 * its place what the links say. Every prefix converges: the copy is a hard
 * link made before the signal changes, so a kill between the two steps
 * leaves the corrupt signal where it was, and the next reader sets it aside
 * again (one more copy, nothing lost).
 *
 * What replaces it (docs/upgrades.md, "A corrupt signal"): when `current`
 * runs a slot other than last-good, nothing tells whether that slot was
 * ever judged, so it is judged again: the rebuilt signal names it as a
 * switched candidate. A current that starts and stays up is kept (a host
 * whose switch never happened is never downgraded); one that cannot start
 * is rolled back by the guard or the recovery unit. Otherwise the signal
 * is removed: there is nothing to judge.
 */
async function setAsideCorruptSignal(
  options: SettleOptions,
  reason: string,
  salvagedOperation: string | undefined,
): Promise<CorruptSignalSetAside> {
  const { signalFile, log } = options;
  const now = options.now();
  const setAsideAs = await linkAside(signalFile, now);
  failpoint(failpoints.signalCorruptSetAside);
  const rebuilt = await rebuildFromLinks(options.paths, {
    operationName: salvagedOperation ?? `corrupt-signal-${corruptStampOf(now)}`,
    startedAt: now.toISOString(),
    corruptSignal: `${reason}; set aside as ${setAsideAs}`,
  });
  if (rebuilt === undefined) await removeOwned(signalFile);
  else await writeUpgradeSignal(signalFile, rebuilt);
  await syncDirectory(path.dirname(signalFile));
  failpoint(failpoints.signalCorruptReplaced);
  log.warn(
    {
      path: signalFile,
      setAsideAs,
      reason,
      ...(rebuilt === undefined ? {} : { judgedAgain: rebuilt.candidatePath }),
    },
    rebuilt === undefined
      ? 'set a corrupt AgentUpgrade signal aside; no upgrade is pending'
      : 'set a corrupt AgentUpgrade signal aside; the current binary is judged again',
  );
  return { setAsideAs, reason, rebuilt };
}

/** What `status` says once a corrupt signal was set aside. */
export function describeSetAside(setAside: CorruptSignalSetAside): string {
  const what =
    setAside.rebuilt === undefined
      ? 'no AgentUpgrade was pending'
      : `the current binary ${setAside.rebuilt.candidatePath ?? ''} is judged again`;
  return `set a corrupt AgentUpgrade signal aside as ${setAside.setAsideAs} (${setAside.reason}); ${what}`;
}

/** The signal that judges `current` again, or undefined when there is nothing to judge. */
async function rebuildFromLinks(
  paths: AgentBinaryPaths,
  fields: Pick<UpgradeSignal, 'operationName' | 'startedAt' | 'corruptSignal'>,
): Promise<UpgradeSignal | undefined> {
  const current = await inspectAgentLink(paths.current);
  const lastGood = await inspectAgentLink(paths.lastGood);
  // Only a runnable slot other than a runnable last-good can be an unjudged
  // candidate with somewhere to roll back to; a current that cannot run is
  // repointed at last-good by the caller instead.
  if (current.kind !== 'runnable' || lastGood.kind !== 'runnable') return undefined;
  if (current.target === lastGood.target || !isSlot(paths, current.target)) return undefined;
  return {
    ...fields,
    candidatePath: current.target,
    previousPath: lastGood.target,
    switchCommitted: true,
  };
}

// The upgrade's state, from the signal and the links.

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
