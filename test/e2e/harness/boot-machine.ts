import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInMachine } from './enter-machine.js';
import type { MachineDisk } from './machine-disk.js';
import { createMachineCgroup, joinCgroupsThenExec } from './machine-cgroup.js';
import { readMachineRecord, writeMachineRecord } from './machine-record.js';
import type { ProcessIdentity } from './process-identity.js';
import { identifyProcess } from './process-identity.js';

/** A booted machine: the nspawn process and the container's init. */
export interface RunningMachine {
  readonly nspawn: ProcessIdentity;
  /** The container's systemd, the target of every nsenter. */
  readonly leader: ProcessIdentity;
  /** How boot ended: `running` or `degraded` (some unit failed). */
  readonly bootState: string;
  /** Settles once nspawn has exited, i.e. the machine is down. */
  readonly exited: Promise<void>;
}

/** How to boot a disk; the same options serve every boot of one host. */
export interface BootMachineOptions {
  /** Also the machine id; the same across reboots so the journal stays one history. */
  readonly uuid: string;
  readonly extraArgs: readonly string[];
  readonly timeoutMs: number;
}

/**
 * Boots the disk with systemd-nspawn and waits until systemd reports the
 * boot finished. `--register=no --keep-unit` because this host has no
 * systemd of its own to register with or to ask for a scope, which is
 * why it starts inside a cgroup the harness made for it (machine-cgroup.ts);
 * `--private-network` so a machine can send nothing out.
 */
export async function bootMachine(
  disk: MachineDisk,
  options: BootMachineOptions,
): Promise<RunningMachine> {
  const deadline = Date.now() + options.timeoutMs;
  const log = openSync(disk.consoleLog, 'a');
  const cgroupProcs = createMachineCgroup(disk.dir);
  const child = spawn(
    'sh',
    [
      '-c',
      joinCgroupsThenExec,
      'join-machine-cgroup',
      ...cgroupProcs,
      '--',
      'systemd-nspawn',
      '--quiet',
      '--register=no',
      '--keep-unit',
      '--boot',
      `--directory=${disk.merged}`,
      `--machine=${disk.name}`,
      `--uuid=${options.uuid}`,
      '--private-network',
      '--console=read-only',
      ...options.extraArgs,
    ],
    // Its own session, so that a Ctrl-C at the terminal reaches only the
    // harness, which tears the machine down itself, and never a machine
    // the harness is still driving.
    { detached: true, stdio: ['ignore', log, log] },
  );
  closeSync(log);
  let hasExited = false;
  const exited = new Promise<void>((resolve) => {
    const settle = (): void => {
      hasExited = true;
      resolve();
    };
    child.once('close', settle);
    // Reported below through the missing pid; a listener keeps the event
    // from becoming an uncaught exception.
    child.once('error', settle);
  });
  if (child.pid === undefined) {
    throw new Error(
      `start systemd-nspawn for ${disk.name}: /bin/sh, which starts it inside the machine's cgroup, could not be run`,
    );
  }
  const nspawn = identifyProcess(child.pid);
  const owner = readMachineRecord(disk.dir)?.owner ?? identifyProcess(process.pid);
  writeMachineRecord(disk.dir, { owner, nspawn });
  const isDown = (): boolean => hasExited;
  const leader = await findLeader(nspawn.pid, isDown, deadline, disk);
  writeMachineRecord(disk.dir, { owner, nspawn, leader });
  const bootState = await waitUntilBooted(leader.pid, isDown, deadline, disk);
  return { nspawn, leader, bootState, exited };
}

/** The container's init is nspawn's child that is pid 1 in its own pid namespace. */
async function findLeader(
  nspawnPid: number,
  isDown: () => boolean,
  deadline: number,
  disk: MachineDisk,
): Promise<ProcessIdentity> {
  for (;;) {
    for (const pid of readChildren(nspawnPid)) {
      if (isNamespaceInit(pid)) return identifyProcess(pid);
    }
    if (isDown() || Date.now() > deadline) throw bootError(disk, 'its init never started');
    await sleep(20);
  }
}

async function waitUntilBooted(
  leaderPid: number,
  isDown: () => boolean,
  deadline: number,
  disk: MachineDisk,
): Promise<string> {
  for (;;) {
    const remaining = deadline - Date.now();
    if (isDown() || remaining <= 0) throw bootError(disk, 'systemd never finished booting');
    // Before systemd listens, this fails at once ("offline"); after, --wait
    // blocks until the boot job is done.
    const result = await runInMachine(leaderPid, ['systemctl', 'is-system-running', '--wait'], {
      timeoutMs: remaining,
    });
    const state = result.stdout.trim();
    if (state === 'running' || state === 'degraded') return state;
    await sleep(100);
  }
}

function readChildren(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${String(pid)}/task/${String(pid)}/children`, 'utf8');
    return text.trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function isNamespaceInit(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${String(pid)}/status`, 'utf8');
    const nspids = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
    return nspids.length > 1 && nspids.at(-1) === '1';
  } catch {
    return false;
  }
}

function bootError(disk: MachineDisk, reason: string): Error {
  return new Error(
    `boot machine ${disk.name} from ${disk.merged}: ${reason}\n--- console (last 40 lines) ---\n${readConsoleTail(disk.consoleLog, 40)}`,
  );
}

// systemd colours its boot messages; ESC is spelt out for the linter.
const colourCodes = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The end of the machine's console output, without terminal colour codes. */
export function readConsoleTail(consoleLog: string, lines: number): string {
  try {
    const text = readFileSync(consoleLog, 'utf8').replace(colourCodes, '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no console output)';
  }
}
