import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileSha256, installFile } from '@aks-flex-node/fs';
import { errnoCode, type Logger } from '@aks-flex-node/log';

/** The nspawn machines a Go release runs the node in; the signal names the active one. */
export const nspawnMachines = ['kube1', 'kube2'] as const;
export type NspawnMachine = (typeof nspawnMachines)[number];

/** Where a machine keeps its copy of the host binary (its exec-credential helper). */
export function nspawnCopyPath(machinesDir: string, machine: NspawnMachine): string {
  return path.join(machinesDir, machine, 'usr/local/bin/aks-flex-node');
}

/**
 * The machine whose copy of the host binary is the running one, as the Go
 * releases record it in the signal's `activeMachine`: a Go daemon started as
 * the candidate refuses a signal without it. Undefined on a host with no
 * machine copy (nothing to keep in sync), or when it cannot tell which of two.
 */
export async function findActiveMachine(
  machinesDir: string,
  runningBinary: string,
): Promise<NspawnMachine | undefined> {
  const present: NspawnMachine[] = [];
  for (const machine of nspawnMachines) {
    if (await isFile(nspawnCopyPath(machinesDir, machine))) present.push(machine);
  }
  if (present.length <= 1) return present[0];
  // Both machines have a copy: the active one is kept identical to the running binary.
  const running = await fileSha256(runningBinary);
  const matching: NspawnMachine[] = [];
  for (const machine of present) {
    if ((await fileSha256(nspawnCopyPath(machinesDir, machine))) === running)
      matching.push(machine);
  }
  return matching.length === 1 ? matching[0] : undefined;
}

/**
 * Installs `source` as the machine's copy, atomically, 0755, as the Go
 * releases keep it: a Go daemon judging an upgrade compares the two digests.
 * A machine without a root filesystem has nothing to sync.
 */
export async function syncNspawnCopy(
  machinesDir: string,
  machine: NspawnMachine,
  source: string,
  log: Logger,
): Promise<void> {
  if (!(await isDirectory(path.join(machinesDir, machine)))) return;
  const target = nspawnCopyPath(machinesDir, machine);
  await installFile(source, target, { mode: 0o755 });
  log.info({ machine, source, target }, 'synced the nspawn machine copy of the agent binary');
}

/** Whether `name` is one of the machines the signal may name. */
export function isNspawnMachine(name: string | undefined): name is NspawnMachine {
  return name === 'kube1' || name === 'kube2';
}

async function isFile(file: string): Promise<boolean> {
  return (await statIfPresent(file))?.isFile() ?? false;
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await statIfPresent(dir))?.isDirectory() ?? false;
}

async function statIfPresent(file: string) {
  try {
    return await stat(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
    throw error;
  }
}
