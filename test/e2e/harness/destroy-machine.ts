import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './e2e-paths.js';

/** The one implementation of teardown; see the script for why it is a separate process. */
const destroyScript = path.join(repoRoot, 'test/e2e/harness/destroy-machine.sh');

/**
 * Tears a machine down from its directory alone: kills what still runs,
 * unmounts the overlay and removes the directory. Synchronous, because it
 * also runs from signal and exit handlers, where nothing asynchronous
 * completes. It runs in its own session so that a second Ctrl-C at the
 * terminal cannot interrupt it. Orderly power-off is the caller's job
 * beforehand; here the machine is thrown away.
 */
export function destroyMachineSync(dir: string): void {
  const result = spawnSync('setsid', ['--wait', 'bash', destroyScript, dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (result.status !== 0) {
    throw new Error(
      `tear down the machine in ${dir}: exit code ${String(result.status)}: ${result.stderr.trim()}`,
    );
  }
}

/**
 * Starts a watcher that tears the machine down if this process dies before
 * disposing of it, by any signal, SIGKILL included. It is detached and
 * unreferenced, so it neither receives the terminal's Ctrl-C nor keeps
 * this process alive; it exits by itself once the directory is gone.
 */
export function guardMachine(dir: string): { readonly stop: () => void } {
  const guard = spawn('bash', [destroyScript, '--guard', dir], {
    detached: true,
    // Nobody may be left to read its output, and a write to a closed pipe
    // would end it before it did its job.
    stdio: 'ignore',
  });
  guard.unref();
  return { stop: () => guard.kill() };
}
