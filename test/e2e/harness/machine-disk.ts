import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { machinesDir } from './e2e-paths.js';
import { guardMachine } from './destroy-machine.js';
import { writeMachineRecord } from './machine-record.js';
import { identifyProcess } from './process-identity.js';

/**
 * A machine's disk: an overlay whose lower layer is the shared cached rootfs
 * and whose upper layer is this machine's own. Everything the machine
 * writes lands in `upper`, so the cache is never changed, and booting the
 * same disk again (a reboot) sees everything the last boot wrote.
 */
export interface MachineDisk {
  /** Also the machine's hostname; unique per machine. */
  readonly name: string;
  readonly dir: string;
  readonly merged: string;
  readonly consoleLog: string;
  /** Stops the watcher that tears the machine down should this process die first. */
  readonly stopGuard: () => void;
}

/**
 * Creates the machine directory, records this process as its owner and
 * mounts the overlay. The owner is recorded and the guard started before
 * the mount, so that however this process dies from then on, something
 * unmounts and removes what it made.
 */
export function createMachineDisk(rootfs: string, namePrefix: string): MachineDisk {
  mkdirSync(machinesDir, { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(path.join(machinesDir, `${namePrefix}-`));
  writeMachineRecord(dir, { owner: identifyProcess(process.pid) });
  const guard = guardMachine(dir);
  const name = path
    .basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, 'x');
  const merged = path.join(dir, 'merged');
  for (const sub of ['upper', 'work', 'merged']) mkdirSync(path.join(dir, sub));
  const options = `lowerdir=${rootfs},upperdir=${path.join(dir, 'upper')},workdir=${path.join(dir, 'work')}`;
  const mount = spawnSync('mount', ['-t', 'overlay', 'overlay', '-o', options, merged], {
    encoding: 'utf8',
  });
  if (mount.status !== 0) {
    guard.stop();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount the overlay of ${name} at ${merged}: ${mount.stderr.trim()}`);
  }
  return {
    name,
    dir,
    merged,
    consoleLog: path.join(dir, 'console.log'),
    stopGuard: guard.stop,
  };
}
