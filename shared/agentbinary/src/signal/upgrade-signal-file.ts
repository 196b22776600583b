import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { upgradeSignalSchema, type UpgradeSignal } from '@aks-flex-node/api';
import { makeIoError, removeOwned, writeFileAtomic } from '@aks-flex-node/fs';
import { AgentError, isNotFound } from '@aks-flex-node/log';

/**
 * Reads the upgrade signal; undefined when there is none. A signal that is not
 * valid JSON or names no operation is an error, never "no signal": treating it
 * as absent would let a new upgrade overwrite an unfinished one's record.
 */
export async function readUpgradeSignal(file: string): Promise<UpgradeSignal | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw makeIoError('read', file, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentError('UPGRADE_FAILED', `the upgrade signal ${file} is not valid JSON`, {
      path: file,
      cause: error,
      hint: `inspect it; if no upgrade is in flight, run \`aks-flex-node recover-agent-upgrade\` or remove ${file}`,
    });
  }
  const parsed = upgradeSignalSchema.safeParse(json);
  if (!parsed.success) {
    throw new AgentError(
      'UPGRADE_FAILED',
      `the upgrade signal ${file} is not valid: ${z.prettifyError(parsed.error)}`,
      {
        path: file,
        hint: `inspect it; if no upgrade is in flight, remove ${file}`,
      },
    );
  }
  return withoutEmptyFields(parsed.data);
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
