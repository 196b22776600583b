import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningMachine } from './boot-machine.js';
import { isRunning } from './process-identity.js';

/**
 * Shuts the machine down in order and waits until nspawn has exited.
 * SIGTERM is nspawn's documented request for an orderly shutdown (it
 * forwards it to the container's systemd); only a machine that ignores it
 * past the deadline has its init killed, which ends its pid namespace.
 */
export async function powerOffMachine(machine: RunningMachine, timeoutMs = 60_000): Promise<void> {
  if (isRunning(machine.nspawn)) process.kill(machine.nspawn.pid, 'SIGTERM');
  if (await settlesWithin(machine.exited, timeoutMs)) return;
  if (isRunning(machine.leader)) process.kill(machine.leader.pid, 'SIGKILL');
  if (await settlesWithin(machine.exited, 10_000)) return;
  if (isRunning(machine.nspawn)) process.kill(machine.nspawn.pid, 'SIGKILL');
  await machine.exited;
}

async function settlesWithin(promise: Promise<void>, timeoutMs: number): Promise<boolean> {
  const controller = new AbortController();
  const timeout = sleep(timeoutMs, false, { signal: controller.signal }).catch(() => false);
  const done = await Promise.race([promise.then(() => true), timeout]);
  controller.abort();
  return done;
}
