import { constants } from 'node:os';
import { destroyMachineSync } from './destroy-machine.js';
import type { MachineDisk } from './machine-disk.js';

/**
 * The machines this process owns and has not disposed of yet. They are torn
 * down synchronously when the process is interrupted (Ctrl-C, SIGTERM from
 * the test runner or the sandbox's trap) or exits with machines still up,
 * so that no container, mount or directory outlives the run. A SIGKILL
 * cannot be caught; each machine's guard (see destroy-machine.sh) covers
 * that case, and the next run's sweep covers a guard that died too.
 */
const liveMachines = new Set<MachineDisk>();
let handlersInstalled = false;

/** Registers a machine for teardown on interruption or exit. */
export function trackMachine(disk: MachineDisk): void {
  installHandlersOnce();
  liveMachines.add(disk);
}

/** Forgets a machine its owner has disposed of. */
export function untrackMachine(disk: MachineDisk): void {
  liveMachines.delete(disk);
}

function destroyLiveMachines(): void {
  for (const disk of liveMachines) {
    liveMachines.delete(disk);
    try {
      destroyMachineSync(disk.dir);
      disk.stopGuard();
    } catch (err) {
      // Keep going: one stuck mount must not leave the other machines
      // running. The guard stays and retries once this process is gone.
      process.stderr.write(`e2e: ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}

function installHandlersOnce(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // `on`, not `once`: with no listener left Node.js restores the default
    // action, and a second Ctrl-C (a terminal sends one to the sandbox and
    // its shell forwards another) would kill us half way through teardown.
    process.on(signal, () => {
      destroyLiveMachines();
      // Exit as the signal would have, now that the machines are gone, but
      // one event-loop turn later: that turn reaps the nspawn children that
      // just exited, which would otherwise linger as zombies.
      const code = 128 + constants.signals[signal];
      setTimeout(() => process.exit(code), 50);
    });
  }
  process.once('exit', destroyLiveMachines);
}
