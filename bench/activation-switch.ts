/**
 * The activation switch's cost (issue 13: median under 20 ms): from the
 * activation lock taken to `current` durably switched, the daemon's own code
 * (acquireActivationLock, then stageAndSwitch as an AgentUpgrade runs it),
 * in a scratch layout under a prefix directory. Download and extraction are
 * left out: the fetch hard-links a prepared candidate and its time is taken
 * off. The candidate's `version --json` run is left out the same way (it is
 * the candidate's start-up, which bench/startup.sh measures). Baseline in
 * the same run, interleaved: the bare durable switch of a pointer file
 * (write temp, fsync, rename, fsync the directory).
 *
 * Bundled and run by bench/activation-switch.sh; prints one JSON object.
 *   node activation-switch.mjs --dir DIR [--runs 50]
 */
import { link, mkdir, open, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
// The modules, not the package's index: it also pulls in the unit templates (build-time ?raw imports).
import { agentBinaryPathsUnder } from '../shared/agentbinary/src/agent-binary-paths.js';
import { stageAndSwitch } from '../shared/agentbinary/src/upgrade/stage-and-switch.js';
import { acquireActivationLock } from '../shared/lock/src/index.js';
import { createSilentLogger } from '../shared/log/src/index.js';

const log = createSilentLogger();

const { values } = parseArgs({
  options: { dir: { type: 'string' }, runs: { type: 'string', default: '50' } },
});
if (values.dir === undefined) throw new Error('--dir is required');
const scratch = path.resolve(values.dir);
const runs = Number(values.runs);

const root = path.join(scratch, 'opt/unbounded/agent');
const paths = agentBinaryPathsUnder(root, path.join(scratch, 'var/lib/machines'));
const run = path.join(scratch, 'run');
const signalFile = path.join(scratch, 'etc/aks-flex-node/agent-upgrade-signal.json');
const template = path.join(scratch, 'candidate');

async function layOut(): Promise<void> {
  await mkdir(paths.slotDir, { recursive: true });
  await mkdir(path.dirname(signalFile), { recursive: true });
  await mkdir(run, { recursive: true });
  await mkdir(paths.machinesDir, { recursive: true });
  await mkdir(path.dirname(paths.binary), { recursive: true });
  // A release that knows the host root, as the switch's own check requires.
  const info = {
    version: 'v0.0.1',
    commit: '',
    arch: 'amd64',
    node: '',
    capabilities: ['host-root'],
  };
  const agent = `#!/bin/sh\necho '${JSON.stringify(info)}'\n`;
  await writeFile(paths.blue, agent, { mode: 0o755 });
  await writeFile(paths.green, agent, { mode: 0o755 });
  await writeFile(template, agent, { mode: 0o755 });
  await symlink(paths.blue, paths.current);
  await symlink(paths.blue, paths.lastGood);
  await symlink(paths.current, paths.binary);
}

/** The activation lock, as the daemon takes it, in the scratch run directory. */
function takeLock(): ReturnType<typeof acquireActivationLock> {
  return acquireActivationLock({
    lockPath: path.join(run, 'activation.lock'),
    goLockPath: path.join(run, 'agent-upgrade.lock'),
    log,
    purpose: 'the activation bench',
  });
}

/** One AgentUpgrade's switch under the lock; returns ms without fetch and verify. */
async function activationOnce(i: number): Promise<number> {
  let excluded = 0;
  const t0 = performance.now();
  const lock = await takeLock();
  let switched = 0;
  try {
    let verifying = 0;
    await stageAndSwitch({
      paths,
      hostRoot: { root, legacy: path.join(scratch, 'usr/local') },
      signalFile,
      operationId: `bench-${i}`,
      redactedUrl: 'https://example.invalid/aks-flex-node-linux-amd64.tar.gz',
      log,
      clock: { wallClock: () => new Date() },
      port: {
        fetch: async (target) => {
          const f0 = performance.now();
          await link(template, target);
          excluded += performance.now() - f0;
        },
        // The candidate's check runs between these two phases: its time is taken off.
        report: (phase) => {
          if (phase === 'verifying') verifying = performance.now();
          if (phase === 'switching') excluded += performance.now() - verifying;
        },
      },
    });
    switched = performance.now();
  } finally {
    await lock.release();
  }
  // The next iteration is a new upgrade: the daemon clears the signal once it reported.
  await rm(signalFile, { force: true });
  return switched - t0 - excluded;
}

/** The lock alone, taken and released: part of the switch's time. */
async function lockOnce(): Promise<number> {
  const t0 = performance.now();
  const lock = await takeLock();
  await lock.release();
  return performance.now() - t0;
}

/** The floor: one pointer file switched durably. */
async function pointerOnce(i: number): Promise<number> {
  const t0 = performance.now();
  const pointer = path.join(paths.slotDir, 'pointer');
  const temp = `${pointer}.tmp`;
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(i % 2 === 0 ? paths.green : paths.blue);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, pointer);
  const dir = await open(paths.slotDir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return performance.now() - t0;
}

function stats(samples: number[]): { median_ms: number; p90_ms: number; max_ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return { median_ms: round(at(0.5)), p90_ms: round(at(0.9)), max_ms: round(sorted.at(-1) ?? 0) };
}

await layOut();
const switches: number[] = [];
const pointers: number[] = [];
const locks: number[] = [];
// Warm-up: the first call loads code and creates the lock's directory.
await activationOnce(-1);
for (let i = 0; i < runs; i++) {
  pointers.push(await pointerOnce(i));
  switches.push(await activationOnce(i));
  locks.push(await lockOnce());
}
const base = stats(pointers);
const act = stats(switches);
const ratio = Math.round((act.median_ms / base.median_ms) * 100) / 100;
console.log(
  JSON.stringify({
    bench: 'activation-switch',
    runs,
    goal: { step: 'activation switch', max_median_ms: 20, met: act.median_ms < 20 },
    rows: [
      { step: 'durable pointer rename (baseline)', ...base, ratio_to_baseline: 1 },
      { step: 'lock taken -> current switched', ...act, ratio_to_baseline: ratio },
      {
        step: '(part) lock taken + released',
        ...stats(locks),
        ratio_to_baseline: Math.round((stats(locks).median_ms / base.median_ms) * 100) / 100,
      },
    ],
  }),
);
