/**
 * Test support, not exported: runs the move as one daemon start would, in a
 * process of its own, so the crash tests (test/namespace) can kill it at a
 * failpoint and start it again. Real host effects except the two only the
 * daemon has: the agent unit is written as the daemon's rewrite would write
 * it (ExecStart naming `current` under the given root), and the restart is
 * only recorded.
 *
 *   node driver.mjs run --exe PATH [--prefix DIR]   Migrate, then the move, as the daemon running PATH
 *   node driver.mjs fresh --exe PATH [--prefix DIR] Migrate, prepare and seed a fresh host from PATH
 *
 * The last stdout line is JSON: `{"outcome":…}` or `{"error":{code,message}}`.
 * With `--timed` the outcome also carries `ms`, the milliseconds the work
 * itself took in this process: bench/host-root-move.sh compares the move
 * with `cp -a`, and a daemon moves the host long after its own start.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { checkBinaryRuns, installFile, writeFileAtomic } from '@aks-flex-node/fs';
import {
  binaryFile,
  currentLinkFile,
  hostPathsUnder,
  hostRootMarkers,
  hostRootSubdirs,
  unitNames,
  type HostPaths,
} from '@aks-flex-node/layout';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { hostRootState } from '../host-root-state.js';
import { migrateHostRoot } from '../migrate-host-root.js';
import { prepareHostRoot } from '../prepare-host-root.js';
import { resolveHostRoot } from '../resolve-host-root.js';
import { systemMoveHost } from './move-host.js';
import { reconcileHostRootMove } from './reconcile-move.js';

const log = createSilentLogger();

/** The agent unit as the daemon renders it: only ExecStart matters to these tests. */
function agentUnitNaming(paths: HostPaths, root: string): string {
  const binary = path.join(root, currentLinkFile);
  return `[Service]\nExecStart=${binary} agent --config ${paths.configFile}\n`;
}

async function run(paths: HostPaths, exe: string): Promise<unknown> {
  await migrateHostRoot(paths, log, hostRootMarkers());
  const real = systemMoveHost({
    rewriteUnits: async (root) => {
      await writeFileAtomic(
        path.join(paths.unitDir, unitNames.agent),
        agentUnitNaming(paths, root),
        {
          mode: 0o644,
        },
      );
      await note(paths, 'rewrites', root);
    },
    queueRestart: () => note(paths, 'restarts', exe),
  });
  const host = { ...real, executable: () => Promise.resolve(exe) };
  return reconcileHostRootMove(paths, log, host);
}

async function fresh(paths: HostPaths, exe: string): Promise<unknown> {
  await migrateHostRoot(paths, log, hostRootMarkers());
  await prepareHostRoot(paths, log, hostRootSubdirs());
  const root = await resolveHostRoot(paths);
  const target = path.join(root, binaryFile);
  await installFile(exe, target, { mode: 0o755 });
  await checkBinaryRuns(target);
  return { state: await hostRootState(paths), resolved: root, binary: target };
}

/** What the fakes did, one line per call, under the private host's /run. */
async function note(paths: HostPaths, what: string, line: string): Promise<void> {
  const dir = path.join(paths.runDir, 'move-driver');
  await mkdir(dir, { recursive: true });
  await appendFile(path.join(dir, what), `${line}\n`);
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      exe: { type: 'string' },
      prefix: { type: 'string', default: '/' },
      timed: { type: 'boolean', default: false },
    },
  });
  const paths = hostPathsUnder(values.prefix);
  const exe = values.exe ?? '';
  try {
    const started = performance.now();
    const outcome = positionals[0] === 'fresh' ? await fresh(paths, exe) : await run(paths, exe);
    const ms = Math.round(performance.now() - started);
    process.stdout.write(`${JSON.stringify(values.timed ? { outcome, ms } : { outcome })}\n`);
  } catch (error) {
    const code = isAgentError(error) ? error.code : 'UNEXPECTED';
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
  }
}

await main();
