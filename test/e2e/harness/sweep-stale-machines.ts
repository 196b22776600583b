import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { destroyMachineSync } from './destroy-machine.js';
import { machinesDir } from './e2e-paths.js';
import { readMachineRecord } from './machine-record.js';
import { isRunning } from './process-identity.js';

/**
 * Tears down machines whose owning process is gone (a test worker or
 * sandbox killed with SIGKILL, a crashed run) and returns their names.
 * Machines of a run still in progress, such as a second checkout's, are
 * left alone because their owner still runs.
 */
export function sweepStaleMachines(): string[] {
  let names: string[];
  try {
    // Only directories are machines: destroy-machine.sh keeps its
    // teardown lock file beside them.
    names = readdirSync(machinesDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
  const swept: string[] = [];
  for (const name of names) {
    const dir = path.join(machinesDir, name);
    const record = readMachineRecord(dir);
    if (record === undefined ? isFresh(dir) : isRunning(record.owner)) continue;
    destroyMachineSync(dir);
    swept.push(name);
  }
  return swept;
}

/**
 * A directory without a record may be one another run created a moment ago
 * and is about to record itself in; only an old one is a leftover.
 */
function isFresh(dir: string): boolean {
  return Date.now() - statSync(dir).mtimeMs < 60_000;
}
