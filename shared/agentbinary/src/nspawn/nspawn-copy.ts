import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileDigest, installFile, repairForWrite } from '@aks-flex-node/fs';
import { AgentError, errnoCode, isAgentError, messageOf, type Logger } from '@aks-flex-node/log';

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
 * machine copy (nothing to keep in sync), or when no copy is the running
 * binary's. When both are (a node the Go releases provisioned and never
 * upgraded since), kube1, the machine they provision first, is named: naming
 * neither left its copy behind at every upgrade on such a node, and the judge
 * of a Go daemon refuses a signal without a machine. The other is left as
 * the Go releases leave an inactive machine.
 */
export async function findActiveMachine(
  machinesDir: string,
  runningBinary: string,
  /**
   * The other binaries a copy may hold (the blue/green slots): when no copy
   * is the running binary's, the machine whose copy is one of these is the
   * one an upgrade synced and a rollback could not write back, while the
   * inactive machine keeps an older release's copy.
   */
  syncedFrom: readonly string[] = [],
): Promise<NspawnMachine | undefined> {
  const present: NspawnMachine[] = [];
  for (const machine of nspawnMachines) {
    if (await isFile(nspawnCopyPath(machinesDir, machine))) present.push(machine);
  }
  if (present.length <= 1) return present[0];
  // Both machines have a copy: the active one is kept identical to the running binary.
  const running = await fileDigest(runningBinary);
  const matching: NspawnMachine[] = [];
  for (const machine of present) {
    if ((await fileDigest(nspawnCopyPath(machinesDir, machine))) === running)
      matching.push(machine);
  }
  if (matching.length > 0) return matching[0];
  const others = new Set<string>();
  for (const binary of syncedFrom) {
    if (binary !== runningBinary && (await isFile(binary))) others.add(await fileDigest(binary));
  }
  const synced: NspawnMachine[] = [];
  for (const machine of present) {
    if (others.has(await fileDigest(nspawnCopyPath(machinesDir, machine)))) synced.push(machine);
  }
  return synced.length === 1 ? synced[0] : undefined;
}

/** What {@link syncNspawnCopy} did: nothing to keep (no such machine), already equal, or written. */
export type NspawnCopySync = 'no-machine' | 'unchanged' | 'written';

/**
 * Installs `source` as the machine's copy, atomically, 0755, as the Go
 * releases keep it: a Go daemon judging an upgrade compares the two digests.
 * A machine without a root filesystem has nothing to sync, and a copy that
 * already holds the source's bytes is left alone: a rollback after a forward
 * sync that never happened then writes nothing (a copy the unit cannot write
 * does not fail a rollback that has nothing to undo there).
 *
 * Throws HOST_ROOT_IO naming the copy, with the repair for its errno.
 */
export async function syncNspawnCopy(
  machinesDir: string,
  machine: NspawnMachine,
  source: string,
  log: Logger,
): Promise<NspawnCopySync> {
  if (!(await isDirectory(path.join(machinesDir, machine)))) return 'no-machine';
  const target = nspawnCopyPath(machinesDir, machine);
  if (await isSameCopy(target, source)) return 'unchanged';
  try {
    await installFile(source, target, { mode: 0o755 });
  } catch (error) {
    throw new AgentError(
      'HOST_ROOT_IO',
      `sync the nspawn machine ${machine}'s copy of the agent ${target} from ${source}: ${messageOf(error)}`,
      {
        path: target,
        cause: error,
        hint: machineCopyRepair(target, error),
      },
    );
  }
  log.info({ machine, source, target }, 'synced the nspawn machine copy of the agent binary');
  return 'written';
}

/**
 * Whether the machine's copy holds the bytes of `source` (SHA-256, spec
 * agentbinary 3.7 step 3). A machine without a root filesystem has no copy to
 * compare: undefined. A missing copy differs.
 */
export async function nspawnCopyMatches(
  machinesDir: string,
  machine: NspawnMachine,
  source: string,
): Promise<boolean | undefined> {
  if (!(await isDirectory(path.join(machinesDir, machine)))) return undefined;
  return isSameCopy(nspawnCopyPath(machinesDir, machine), source);
}

// Digests through the daemon's identity-keyed cache (shared/fs
// file-digests.ts), not read again at each look: on a node the running binary
// and both machines' copies are 130 MB each, and an upgrade looks at them
// when it finds the active machine, syncs its copy and judges, about seven
// reads of 130 MB where the files seldom changed. A copy written since its
// digest was taken has a new ctime or inode, and is read again.
async function isSameCopy(copy: string, source: string): Promise<boolean> {
  const [copied, original] = await Promise.all([statIfPresent(copy), statIfPresent(source)]);
  if (copied?.isFile() !== true || original === undefined || copied.size !== original.size) {
    return false;
  }
  return (await fileDigest(copy)) === (await fileDigest(source));
}

/**
 * The one step that lets the agent write a machine's copy again. A read-only
 * directory there is most often the unit's own sandbox: a machine created
 * after the agent started is not among the unit's writable paths until the
 * unit starts again.
 */
export function machineCopyRepair(copy: string, error: unknown): string {
  if (errnoCode(isAgentError(error) ? error.cause : error) === 'EROFS') {
    return `run \`systemctl restart aks-flex-node-agent\` (its unit makes the machines that exist when it starts writable); if ${path.dirname(copy)} is still read-only, ${repairForWrite(copy, error)}`;
  }
  return repairForWrite(copy, error);
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
