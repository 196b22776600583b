// Over 300 lines because each row is a sequence of daemon starts (spec #15 needs two or
// three); one table keeps every outcome of §3.7 beside the others.
import { rm } from 'node:fs/promises';
import type { Operation, UpgradeSignal } from '@aks-flex-node/api';
import { describe, expect, it } from 'vitest';
import {
  judgeStartedUpgrade,
  type JudgeOptions,
  type JudgeOutcome,
} from './judge-started-upgrade.js';
import {
  assertInvariants,
  assertRecords,
  at,
  fakeJudgeHost,
  installedLayout,
  link,
  newLayout,
  readSignal,
  selection,
  signalBytes,
  writeSignal,
  type BinaryName,
  type Layout,
} from './test-fixtures.js';

const sourceUrl = 'https://releases.example/aks-flex-node-v2-linux-amd64.tar.gz';
const startedAt = '2026-01-01T00:00:00.000Z';
const switchedAt = '2026-01-01T00:00:01.000Z';
const judgedAt = '2026-01-01T01:00:00.000Z';

/** The signal an old daemon on blue leaves once green is chosen, before it switches. */
function pendingSignal(l: Layout): Partial<UpgradeSignal> {
  return {
    initiatingDaemonInstance: 'old-daemon',
    sourceUrl,
    startedAt,
    candidatePath: l.paths.green,
    previousPath: l.paths.blue,
  };
}

/** The signal an old daemon on blue leaves after switching to green (spec §6.5 item 1). */
function switchedSignal(l: Layout, extra: Partial<UpgradeSignal> = {}): Partial<UpgradeSignal> {
  return {
    ...pendingSignal(l),
    switchCommitted: true,
    switchedAt,
    candidateVersion: 'v2',
    ...extra,
  };
}

/** A host switched from blue to green, with the signal that says so. */
async function switchedToGreen(l: Layout, extra: Partial<UpgradeSignal> = {}): Promise<void> {
  await installedLayout(l, 'green', 'blue');
  await writeSignal(l, switchedSignal(l, extra));
}

interface JudgeStep {
  /** The executable the judging daemon runs. */
  running: BinaryName;
  instance: string;
  /** The outcome, or the error it must throw. */
  outcome: JudgeOutcome | RegExp;
  /** After the step: absent, the same bytes as before it, or kept with these fields. */
  signal: 'absent' | 'untouched' | Partial<UpgradeSignal>;
  fakes?: Partial<JudgeOptions>;
}

interface JudgeCase {
  setup: (l: Layout) => Promise<void>;
  /** One daemon start after another. */
  steps: JudgeStep[];
  /** Every record written, in order, over all steps. */
  records: Partial<Operation>[];
  restarts: number;
  after: { current: string; lastGood: string };
}

/** The failure the judge records for a daemon that is not the candidate (an asymmetric matcher). */
const notTheCandidate = expect.stringMatching(
  /^the daemon started from .*, not the candidate /,
) as unknown as string;

const cases: Record<string, JudgeCase> = {
  'agentbinary§3.7 step 1 no signal: nothing to judge': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    steps: [{ running: 'blue', instance: 'new-daemon', outcome: 'no-signal', signal: 'absent' }],
    records: [],
    restarts: 0,
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary#17 the signal of this very daemon, with no failure, is left untouched': {
    setup: switchedToGreen,
    steps: [
      { running: 'blue', instance: 'old-daemon', outcome: 'own-signal', signal: 'untouched' },
      { running: 'blue', instance: 'old-daemon', outcome: 'own-signal', signal: 'untouched' },
    ],
    records: [],
    restarts: 0,
    after: { current: 'green', lastGood: 'blue' },
  },
  "agentbinary§3.7 step 2 a failure recorded on this very daemon's signal is judged, not skipped": {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await writeSignal(l, switchedSignal(l, { failure: 'recovered', recoveryRequired: true }));
    },
    steps: [{ running: 'blue', instance: 'old-daemon', outcome: 'rolled-back', signal: 'absent' }],
    records: [{ state: 'rolled-back', message: 'recovered' }],
    restarts: 0,
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary#16 the candidate started: succeeded is recorded once and the signal cleared': {
    setup: switchedToGreen,
    steps: [
      { running: 'green', instance: 'new-daemon', outcome: 'succeeded', signal: 'absent' },
      { running: 'green', instance: 'new-daemon', outcome: 'no-signal', signal: 'absent' },
    ],
    records: [
      {
        state: 'succeeded',
        message: 'AgentUpgrade completed',
        sourceUrl,
        fromPath: '<blue>',
        toPath: '<green>',
        toVersion: 'v2',
        startedAt,
        switchedAt,
        finishedAt: judgedAt,
      },
    ],
    restarts: 0,
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary§6.5 killed after the switch, before the commit: the started candidate succeeds': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await writeSignal(l, pendingSignal(l));
    },
    steps: [{ running: 'green', instance: 'new-daemon', outcome: 'succeeded', signal: 'absent' }],
    records: [{ state: 'succeeded', toPath: '<green>' }],
    restarts: 0,
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary§6.5 killed before a slot was chosen: failed, nothing rolled back': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await writeSignal(l, { initiatingDaemonInstance: 'old-daemon', sourceUrl, startedAt });
    },
    steps: [{ running: 'blue', instance: 'new-daemon', outcome: 'failed', signal: 'absent' }],
    records: [{ state: 'failed', message: 'interrupted before selecting a candidate slot' }],
    restarts: 0,
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§6.5 killed before switching: failed, the host is not downgraded, signal cleared': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await writeSignal(l, {
        initiatingDaemonInstance: 'old-daemon',
        candidatePath: l.paths.blue,
        previousPath: l.paths.green,
      });
    },
    steps: [{ running: 'green', instance: 'new-daemon', outcome: 'failed', signal: 'absent' }],
    records: [
      {
        state: 'failed',
        message: 'interrupted before switching the candidate binary',
        fromPath: '<green>',
        toPath: '<blue>',
      },
    ],
    restarts: 0,
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary§3.7 step 3 no slot chosen and current dangling: the candidate is not active, so failed':
    {
      setup: async (l) => {
        await installedLayout(l, 'blue', 'blue');
        await link(l.paths.current, `${l.paths.slotDir}/aks-flex-node-removed`);
        await rm(l.paths.lastGood);
        await writeSignal(l, { initiatingDaemonInstance: 'old-daemon' });
      },
      steps: [{ running: 'blue', instance: 'new-daemon', outcome: 'failed', signal: 'absent' }],
      records: [{ state: 'failed', message: 'interrupted before selecting a candidate slot' }],
      restarts: 0,
      after: { current: 'missing', lastGood: 'missing' },
    },
  'agentbinary#15 started from another binary while current is the candidate: rollback, one restart, then last-good records it':
    {
      setup: switchedToGreen,
      steps: [
        {
          running: 'stray',
          instance: 'new-daemon',
          outcome: 'restart-scheduled',
          signal: { failure: notTheCandidate, recoveryRequired: true },
        },
        { running: 'blue', instance: 'last-good-daemon', outcome: 'rolled-back', signal: 'absent' },
        { running: 'blue', instance: 'last-good-daemon', outcome: 'no-signal', signal: 'absent' },
      ],
      records: [
        {
          state: 'rolled-back',
          message: notTheCandidate,
          toPath: '<green>',
          switchedAt,
          finishedAt: judgedAt,
        },
      ],
      restarts: 1,
      after: { current: 'blue', lastGood: 'blue' },
    },
  'issue28#5 the candidate started but could not refresh the nspawn helper: rollback, one restart, then last-good records why':
    {
      setup: switchedToGreen,
      steps: [
        {
          running: 'green',
          instance: 'new-daemon',
          outcome: 'restart-scheduled',
          signal: {
            failure: 'could not refresh the nspawn lifecycle helper',
            recoveryRequired: true,
          },
          fakes: { startupFailure: 'could not refresh the nspawn lifecycle helper' },
        },
        { running: 'blue', instance: 'last-good-daemon', outcome: 'rolled-back', signal: 'absent' },
      ],
      records: [{ state: 'rolled-back', message: 'could not refresh the nspawn lifecycle helper' }],
      restarts: 1,
      after: { current: 'blue', lastGood: 'blue' },
    },
  'agentbinary#15 a recorded failure while the candidate runs: rollback, one restart, then last-good records it':
    {
      setup: (l) =>
        switchedToGreen(l, {
          failure: 'the upgrade guard saw no healthy daemon',
          recoveryRequired: true,
        }),
      steps: [
        {
          running: 'green',
          instance: 'new-daemon',
          outcome: 'restart-scheduled',
          signal: 'untouched',
        },
        { running: 'blue', instance: 'last-good-daemon', outcome: 'rolled-back', signal: 'absent' },
      ],
      records: [{ state: 'rolled-back', message: 'the upgrade guard saw no healthy daemon' }],
      restarts: 1,
      after: { current: 'blue', lastGood: 'blue' },
    },
  'agentbinary§6.5 the previous binary started instead of the candidate: rolled back and recorded at once':
    {
      setup: switchedToGreen,
      steps: [
        { running: 'blue', instance: 'new-daemon', outcome: 'rolled-back', signal: 'absent' },
      ],
      records: [{ state: 'rolled-back', message: notTheCandidate }],
      restarts: 0,
      after: { current: 'blue', lastGood: 'blue' },
    },
  'agentbinary§6.5 step 4 the failure recovery recorded is finished by the last-good daemon': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await writeSignal(
        l,
        switchedSignal(l, { failure: 'candidate crashed 5 times', recoveryRequired: true }),
      );
    },
    steps: [
      { running: 'blue', instance: 'last-good-daemon', outcome: 'rolled-back', signal: 'absent' },
    ],
    records: [{ state: 'rolled-back', message: 'candidate crashed 5 times', toVersion: 'v2' }],
    restarts: 0,
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.7 step 4 a recorded failure with the candidate not active: failed, no rollback': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await writeSignal(l, { candidatePath: l.paths.green, failure: 'staging was abandoned' });
    },
    steps: [{ running: 'blue', instance: 'new-daemon', outcome: 'failed', signal: 'absent' }],
    records: [{ state: 'failed', message: 'staging was abandoned', startedAt: judgedAt }],
    restarts: 0,
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary#14 not the candidate and no last-good: an error, the failure kept on the signal': {
    setup: async (l) => {
      await switchedToGreen(l);
      await rm(l.paths.lastGood);
    },
    steps: [
      {
        running: 'stray',
        instance: 'new-daemon',
        outcome: /resolve last-good agent binary/,
        signal: { failure: notTheCandidate, recoveryRequired: true },
      },
      {
        running: 'stray',
        instance: 'new-daemon',
        outcome: /resolve last-good agent binary/,
        signal: 'untouched',
      },
    ],
    records: [],
    restarts: 0,
    after: { current: 'green', lastGood: 'missing' },
  },
  'agentbinary#19 a recorded failure and no last-good: an error, the signal kept as it was': {
    setup: async (l) => {
      await switchedToGreen(l, { failure: 'daemon failed', recoveryRequired: true });
      await rm(l.paths.lastGood);
    },
    steps: [
      {
        running: 'green',
        instance: 'new-daemon',
        outcome: /resolve last-good agent binary/,
        signal: 'untouched',
      },
    ],
    records: [],
    restarts: 0,
    after: { current: 'green', lastGood: 'missing' },
  },
  'agentbinary§3.7 step 6 a result that cannot be recorded keeps the signal for the next start': {
    setup: switchedToGreen,
    steps: [
      {
        running: 'green',
        instance: 'new-daemon',
        outcome: /disk full/,
        signal: 'untouched',
        fakes: { recordResult: () => Promise.reject(new Error('write record: disk full')) },
      },
      { running: 'green', instance: 'new-daemon', outcome: 'succeeded', signal: 'absent' },
    ],
    records: [{ state: 'succeeded' }],
    restarts: 0,
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary§6.5 a restart that cannot be scheduled: the failure and the rollback stay, last-good finishes':
    {
      setup: switchedToGreen,
      steps: [
        {
          running: 'stray',
          instance: 'new-daemon',
          outcome: /systemd-run failed/,
          signal: { failure: notTheCandidate, recoveryRequired: true },
          fakes: { scheduleRestart: () => Promise.reject(new Error('systemd-run failed')) },
        },
        { running: 'blue', instance: 'last-good-daemon', outcome: 'rolled-back', signal: 'absent' },
      ],
      records: [{ state: 'rolled-back' }],
      restarts: 0,
      after: { current: 'blue', lastGood: 'blue' },
    },
};

/** Table paths are written `<blue>`; this puts the layout's real paths in. */
function withPaths(l: Layout, record: Partial<Operation>): Partial<Operation> {
  const resolve = (value: unknown): unknown =>
    typeof value === 'string' && /^<\w+>$/.test(value)
      ? at(l, value.slice(1, -1) as BinaryName)
      : value;
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, resolve(value)]));
}

describe('judgeStartedUpgrade (spec agentbinary §3.7, §6.5)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const records: Operation[] = [];
    let restarts = 0;
    for (const step of row.steps) {
      const signalBefore = await signalBytes(l);
      const host = fakeJudgeHost(l, at(l, step.running), step.instance, step.fakes);
      const judged = judgeStartedUpgrade(host.options);
      if (step.outcome instanceof RegExp) await expect(judged).rejects.toThrow(step.outcome);
      else expect(await judged).toBe(step.outcome);
      records.push(...host.records);
      restarts += host.restarts;
      if (step.signal === 'absent') expect(await signalBytes(l)).toBeUndefined();
      else if (step.signal === 'untouched') expect(await signalBytes(l)).toBe(signalBefore);
      else expect(await readSignal(l)).toMatchObject(step.signal);
      await assertInvariants(l);
    }
    assertRecords(records);
    expect(records).toEqual(
      row.records.map((record) => expect.objectContaining(withPaths(l, record)) as unknown),
    );
    expect(restarts).toBe(row.restarts);
    expect(await selection(l)).toEqual(row.after);
  });
});
