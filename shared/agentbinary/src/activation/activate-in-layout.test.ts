// Over 200 lines because it is three tables (activations, refusals, failed restarts) over one
// set of fixtures; split apart, each would repeat the fake service and the invariants.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { activateInLayout, type ActivateInLayoutOptions } from './activate-in-layout.js';
import { createFileInspector } from './activation-inspector.js';
import type { ActivationLayout } from './plan-activation.js';
import { snapshotCandidate } from './snapshot-candidate.js';
import {
  expectFailure,
  fakeService,
  listTree,
  stageCandidate,
  type FakeService,
} from './test-fixtures.js';
import {
  agentScript,
  assertInvariants,
  installedLayout,
  legacyPlainBinary,
  link,
  newLayout,
  resolvedName,
  runVersion,
  selection,
  type BinaryName,
  type Layout,
} from '../upgrade/test-fixtures.js';

const log = createSilentLogger();

/** Snapshots the staged candidate as the CLI does, and builds the options over a fake service. */
async function activation(
  l: Layout,
  fake: FakeService,
  overrides: Partial<ActivateInLayoutOptions> & { version?: string } = {},
): Promise<ActivateInLayoutOptions & { verified: string[] }> {
  const { version, ...rest } = overrides;
  const candidatePath = await stageCandidate(l, version);
  // The scratch directory is this user's, under the shared /tmp: trusted from there down.
  const snapshot = await snapshotCandidate(
    candidatePath,
    path.join(l.tmp, 'var/lib/aks-flex-node'),
    {
      ownerUid: process.getuid?.() ?? 0,
      topDir: l.tmp,
    },
  );
  const { blue, green, current, lastGood, binary } = l.paths;
  const layout: ActivationLayout = { blue, green, current, lastGood, binary };
  const verified: string[] = [];
  return {
    layout,
    candidatePath,
    snapshotPath: snapshot.path,
    files: createFileInspector(),
    service: fake.service,
    verify: async (binary) => {
      verified.push(path.basename(binary));
      await runVersion(binary);
    },
    log,
    verified,
    ...rest,
  };
}

/** The version each slot reports, 'missing' where there is none. */
async function slotVersions(l: Layout): Promise<{ blue: string; green: string }> {
  const version = (file: string) =>
    runVersion(file).then(
      (info) => info.version,
      () => 'missing',
    );
  return { blue: await version(l.paths.blue), green: await version(l.paths.green) };
}

interface ActivationCase {
  setup: (l: Layout) => Promise<void>;
  candidate?: string;
  current: BinaryName;
  lastGood: BinaryName;
  slots: { blue: string; green: string };
  changed: boolean;
}

const activations: Record<string, ActivationCase> = {
  'agentbinary#99 a legacy binary: current → green, last-good → blue holding the legacy bytes': {
    setup: legacyPlainBinary,
    current: 'green',
    lastGood: 'blue',
    slots: { blue: 'legacy', green: 'v2' },
    changed: true,
  },
  'agentbinary#100 current and last-good linked to the plain binary: the same as #99': {
    setup: async (l) => {
      await legacyPlainBinary(l);
      await link(l.paths.current, l.paths.binary);
      await link(l.paths.lastGood, l.paths.binary);
    },
    current: 'green',
    lastGood: 'blue',
    slots: { blue: 'legacy', green: 'v2' },
    changed: true,
  },
  'agentbinary#101 current missing, last-good → blue: current → green, last-good → blue': {
    setup: async (l) => {
      await agentScript(l.paths.blue, 'blue');
      await link(l.paths.lastGood, l.paths.blue);
    },
    current: 'green',
    lastGood: 'blue',
    slots: { blue: 'blue', green: 'v2' },
    changed: true,
  },
  'agentbinary#102 an existing layout on blue: current → green, last-good → blue': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    current: 'green',
    lastGood: 'blue',
    slots: { blue: 'blue', green: 'v2' },
    changed: true,
  },
  'agentbinary#102 last-good naming the slot to write moves to the running binary first': {
    setup: (l) => installedLayout(l, 'blue', 'green'),
    current: 'green',
    lastGood: 'blue',
    slots: { blue: 'blue', green: 'v2' },
    changed: true,
  },
  'agentbinary#105 an identical candidate, last-good → green: nothing changes': {
    setup: (l) => installedLayout(l, 'blue', 'green'),
    candidate: 'blue',
    current: 'blue',
    lastGood: 'green',
    slots: { blue: 'blue', green: 'green' },
    changed: false,
  },
  'agentbinary#106 an identical candidate without last-good: last-good repaired to blue': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await rm(l.paths.lastGood);
    },
    candidate: 'blue',
    current: 'blue',
    lastGood: 'blue',
    slots: { blue: 'blue', green: 'green' },
    changed: false,
  },
};

describe('activateInLayout', () => {
  it.each(Object.entries(activations))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const fake = fakeService();
    const options = await activation(l, fake, { version: row.candidate ?? 'v2' });
    const result = await activateInLayout(options);
    expect(result.changed).toBe(row.changed);
    expect(await selection(l)).toEqual({ current: row.current, lastGood: row.lastGood });
    expect(await resolvedName(l, l.paths.binary)).toBe(row.current);
    expect(await slotVersions(l)).toEqual(row.slots);
    expect(fake.calls).toEqual([
      'preflight',
      'prepare',
      'reload',
      'restart',
      `waitHealthy aks-flex-node-${row.current}`,
    ]);
    expect(options.verified).toEqual(
      row.changed ? ['candidate', `aks-flex-node-${row.current}`] : ['candidate'],
    );
    await assertInvariants(l);
    // Idempotent: the same candidate again installs nothing and leaves the selection alone.
    const again = await activateInLayout(
      await activation(l, fakeService(), { version: row.candidate ?? 'v2' }),
    );
    expect(again.changed).toBe(false);
    expect(await selection(l)).toEqual({ current: row.current, lastGood: row.lastGood });
    expect(await slotVersions(l)).toEqual(row.slots);
  });

  it('agentbinary#104 without a plain binary path the activation works and leaves it alone', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await rm(l.paths.binary);
    const fake = fakeService();
    const options = await activation(l, fake);
    const { blue, green, current, lastGood } = l.paths;
    await activateInLayout({ ...options, layout: { blue, green, current, lastGood } });
    expect(await selection(l)).toEqual({ current: 'green', lastGood: 'blue' });
    expect(await resolvedName(l, l.paths.binary)).toBe('missing');
  });

  it('agentbinary#94 the candidate replaced after the snapshot: the snapshot is installed', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const options = await activation(l, fakeService());
    await agentScript(options.candidatePath, 'v3');
    await activateInLayout(options);
    expect(await slotVersions(l)).toEqual({ blue: 'blue', green: 'v2' });
  });
});

interface RefusalCase {
  setup: (l: Layout) => Promise<void>;
  running?: (l: Layout) => string;
  verify?: ActivateInLayoutOptions['verify'];
  code: string;
  message: string;
}

const refusals: Record<string, RefusalCase> = {
  'agentbinary#103 a directory at the plain binary path: refused before prepare, links unchanged': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await rm(l.paths.binary);
      await mkdir(l.paths.binary);
    },
    code: 'UPGRADE_REFUSED',
    message: 'not a replaceable regular file or symlink',
  },
  'agentbinary§3.6.2 the service still runs the slot to write (current moved without a restart)': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    running: (l) => l.paths.green,
    code: 'UPGRADE_REFUSED',
    message: 'which this activation would overwrite',
  },
  'agentbinary§3.6.2 a candidate that does not run is refused before anything is written': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    verify: () => Promise.reject(new AgentError('UPGRADE_REFUSED', 'the candidate does not run')),
    code: 'UPGRADE_REFUSED',
    message: 'does not run',
  },
};

describe('activateInLayout refusals', () => {
  it.each(Object.entries(refusals))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const fake = fakeService(row.running === undefined ? {} : { running: row.running(l) });
    const options = await activation(
      l,
      fake,
      row.verify === undefined ? {} : { verify: row.verify },
    );
    const before = await listTree(path.join(l.tmp, 'opt'));
    await expectFailure(activateInLayout(options), row.code, row.message);
    expect(fake.calls).not.toContain('prepare');
    expect(await listTree(path.join(l.tmp, 'opt'))).toEqual(before);
  });
});

describe('activateInLayout rollback', () => {
  it('agentbinary#107 an unhealthy candidate is rolled back: 2 restarts, health on green then blue', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const caller = new AbortController();
    const fake = fakeService({
      waitHealthy: (expected) => {
        if (path.basename(expected) !== 'aks-flex-node-green') return Promise.resolve();
        // The caller gives up inside the health check; the rollback must still run.
        caller.abort();
        return Promise.reject(new Error('the daemon did not execute the expected binary'));
      },
    });
    const options = await activation(l, fake, { signal: caller.signal });
    await expectFailure(
      activateInLayout(options),
      'UPGRADE_FAILED',
      `rolled back to ${l.paths.blue}`,
    );
    expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    expect(fake.restartSignalsAborted).toEqual([false, false]);
    expect(fake.health.map((file) => path.basename(file))).toEqual([
      'aks-flex-node-green',
      'aks-flex-node-blue',
    ]);
    await assertInvariants(l);
  });

  it('agentbinary#108 a restart that always fails: not rolled back, current → blue, 2 restarts', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const fake = fakeService({
      restart: () => Promise.reject(new Error('systemctl restart exited 1')),
    });
    await expectFailure(
      activateInLayout(await activation(l, fake)),
      'UPGRADE_FAILED',
      `rollback to ${l.paths.blue} failed too`,
    );
    expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    expect(fake.restartSignalsAborted).toHaveLength(2);
    expect(fake.health).toEqual([]);
    await assertInvariants(l);
  });
});
