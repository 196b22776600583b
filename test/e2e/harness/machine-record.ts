import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ProcessIdentity } from './process-identity.js';

/**
 * What a machine directory says about who owns it and which processes run
 * it. It lives in the directory itself so that a later run can tear down
 * what a killed run left behind without any other state.
 */
export interface MachineRecord {
  readonly owner: ProcessIdentity;
  readonly nspawn?: ProcessIdentity;
  readonly leader?: ProcessIdentity;
}

const recordName = 'machine.json';

/** Writes the record atomically: a reader sees the old record or the new one, never half. */
export function writeMachineRecord(dir: string, record: MachineRecord): void {
  const file = path.join(dir, recordName);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(record)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** Reads the record, or undefined when the directory has none (a half-created machine). */
export function readMachineRecord(dir: string): MachineRecord | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path.join(dir, recordName), 'utf8'));
  } catch {
    return undefined;
  }
  return isMachineRecord(parsed) ? parsed : undefined;
}

function isProcessIdentity(value: unknown): value is ProcessIdentity {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>).pid === 'number' &&
    typeof (value as Record<string, unknown>).startTime === 'string'
  );
}

function isMachineRecord(value: unknown): value is MachineRecord {
  if (typeof value !== 'object' || value === null) return false;
  const { owner, nspawn, leader } = value as Record<string, unknown>;
  return (
    isProcessIdentity(owner) &&
    (nspawn === undefined || isProcessIdentity(nspawn)) &&
    (leader === undefined || isProcessIdentity(leader))
  );
}
