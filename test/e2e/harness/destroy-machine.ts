import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { readMachineRecord } from './machine-record.js';
import type { ProcessIdentity } from './process-identity.js';
import { isRunning } from './process-identity.js';

/**
 * Tears a machine down from its directory alone: kills what still runs,
 * unmounts the overlay and removes the directory. Synchronous on purpose:
 * it runs from signal and exit handlers, where nothing asynchronous
 * completes. Orderly power-off is the caller's job beforehand; here the
 * machine is already being thrown away.
 */
export function destroyMachineSync(dir: string): void {
  const record = readMachineRecord(dir);
  const leader = record?.leader;
  const nspawn = record?.nspawn;
  // Killing the container's init ends its whole pid namespace at once;
  // nspawn then exits by itself and releases the overlay.
  if (leader !== undefined && isRunning(leader)) {
    process.kill(leader.pid, 'SIGKILL');
  }
  if (nspawn !== undefined && !waitUntilGone(nspawn, 10_000)) {
    process.kill(nspawn.pid, 'SIGKILL');
    waitUntilGone(nspawn, 5_000);
  }
  const merged = path.join(dir, 'merged');
  if (isMountPoint(merged)) {
    const umount = spawnSync('umount', [merged], { encoding: 'utf8' });
    if (umount.status !== 0) {
      // Removing files through a still-mounted overlay would only write
      // whiteouts; keep the directory for a later sweep and say why.
      throw new Error(`unmount ${merged}: ${umount.stderr.trim()}; the next run sweeps it`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

function waitUntilGone(target: ProcessIdentity, timeoutMs: number): boolean {
  const deadline = Date.now() + timeoutMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (isRunning(target)) {
    if (Date.now() > deadline) return false;
    Atomics.wait(nap, 0, 0, 50);
  }
  return true;
}

/** True when a mount sits at exactly this path in our mount namespace. */
export function isMountPoint(target: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === target);
}
