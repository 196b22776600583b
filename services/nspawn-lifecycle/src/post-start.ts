import path from 'node:path';
import type { NspawnMachine } from '@aks-flex-node/layout';
import { AgentError, isNotFound, messageOf } from '@aks-flex-node/log';
import type { HookLog } from './hook-log.js';

/** The agent library's lifecycle state of one machine, under its state directory. */
export function nspawnLifecycleStateFile(stateDir: string, machine: NspawnMachine): string {
  return path.join(stateDir, `${machine}-nspawn-lifecycle.json`);
}

/**
 * post-start: after the machine's unit started, rewire NVIDIA devices into
 * it when its lifecycle state says it has GPUs (spec/daemon.md 6.3). It
 * neither migrates nor writes under the host root. A machine without GPU
 * state has nothing to rewire; a state file that cannot be read or decoded
 * is an error, as in the Go releases.
 *
 * Throws INVALID_CONFIG for a state file that is not JSON.
 */
export async function runPostStart(
  machine: NspawnMachine,
  options: { stateDir: string; log: HookLog },
): Promise<number> {
  const file = nspawnLifecycleStateFile(options.stateDir, machine);
  let text: string;
  try {
    // Loaded here, not at the module's top: node:fs/promises brings readline
    // and the REPL's history with it, milliseconds of every pre-start, which
    // shares this bundle and reads no file (scripts/build.mjs refuses it there).
    const { readFile } = process.getBuiltinModule('node:fs/promises');
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (!isNotFound(error)) throw error;
    options.log.info(`no lifecycle state for ${machine}; no GPU devices to rewire`, { path: file });
    return 0;
  }
  let state: unknown;
  try {
    state = JSON.parse(text) as unknown;
  } catch (error) {
    throw new AgentError(
      'INVALID_CONFIG',
      `decode nspawn lifecycle state ${file}: ${messageOf(error)}`,
      {
        path: file,
        hint: `the machine's state is written when it is provisioned; restore ${file} or provision the machine again`,
        cause: error,
      },
    );
  }
  const nvidia =
    typeof state === 'object' && state !== null
      ? (state as Record<string, unknown>).nvidia
      : undefined;
  if (nvidia === undefined || nvidia === null) {
    options.log.info(`${machine} has no GPU devices to rewire`, { path: file });
    return 0;
  }
  // Rewiring GPUs is the agent library's, which this project does not carry;
  // the machine still starts, and the line says what was not done.
  options.log.warn(
    `${machine} has NVIDIA state, but this release does not rewire GPU devices; the machine runs without them`,
    { path: file },
  );
  return 0;
}
