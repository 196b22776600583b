import { constants } from 'node:os';
import { destroyMachineSync } from './destroy-machine.js';

/**
 * The machines this process owns and has not disposed of yet. They are torn
 * down synchronously when the process is interrupted (Ctrl-C, SIGTERM from
 * the test runner or the sandbox's trap) or exits with machines still up,
 * so that no container, mount or directory outlives the run. A SIGKILL
 * cannot be caught; the next run's sweep handles that case.
 */
const liveMachineDirs = new Set<string>();
let handlersInstalled = false;

/** Registers a machine directory for teardown on interruption or exit. */
export function trackMachine(dir: string): void {
  installHandlersOnce();
  liveMachineDirs.add(dir);
}

/** Forgets a machine its owner has disposed of. */
export function untrackMachine(dir: string): void {
  liveMachineDirs.delete(dir);
}

function destroyLiveMachines(): void {
  for (const dir of liveMachineDirs) {
    try {
      destroyMachineSync(dir);
    } catch (err) {
      // Keep going: one stuck mount must not leave the other machines running.
      process.stderr.write(`e2e: tear down ${dir}: ${String(err)}\n`);
    }
    liveMachineDirs.delete(dir);
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
      // Exit as the signal would have, now that the machines are gone.
      process.exit(128 + constants.signals[signal]);
    });
  }
  process.once('exit', destroyLiveMachines);
}
