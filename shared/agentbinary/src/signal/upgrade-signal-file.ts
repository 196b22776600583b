import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { upgradeSignalSchema, type UpgradeSignal } from '@aks-flex-node/api';
import { makeIoError, removeOwned, writeFileAtomic } from '@aks-flex-node/fs';
import { AgentError, isNotFound, messageOf } from '@aks-flex-node/log';

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
 * set a corrupt one aside first ({@link settleCorruptSignal}).
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
