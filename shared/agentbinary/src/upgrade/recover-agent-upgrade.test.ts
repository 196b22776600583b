import { rm } from 'node:fs/promises';
import type { UpgradeSignal } from '@aks-flex-node/api';
import { describe, expect, it } from 'vitest';
import { judgeStartedUpgrade } from './judge-started-upgrade.js';
import { defaultRecoveryMessage, recoverAgentUpgrade } from './recover-agent-upgrade.js';
import { stageAndSwitch } from './stage-and-switch.js';
import {
  assertInvariants,
  assertRecords,
  at,
  blueOnly,
  fakeJudgeHost,
  fakeStageHost,
  installedLayout,
  log,
  newLayout,
  operationId,
  readSignal,
  selection,
  signalBytes,
  writeSignal,
  type BinaryName,
  type Layout,
} from './test-fixtures.js';

/** The signal of a switch from blue to green, as staging leaves it. */
async function switchedToGreen(l: Layout, extra: Partial<UpgradeSignal> = {}): Promise<void> {
  await installedLayout(l, 'green', 'blue');
  await writeSignal(l, {
    initiatingDaemonInstance: 'old-daemon',
    candidatePath: l.paths.green,
    previousPath: l.paths.blue,
    switchCommitted: true,
    ...extra,
  });
}

interface RecoverCase {
  setup: (l: Layout) => Promise<void>;
  message: string | undefined;
  /** What recovery reports; omitted when it must fail with `error`. */
  result?: { rolledBack: boolean; current: BinaryName | undefined };
  error?: RegExp;
  /** The signal afterwards: absent, or kept with these fields. */
  signal: 'absent' | Partial<UpgradeSignal>;
  after: { current: string; lastGood: string };
}

const cases: Record<string, RecoverCase> = {
  'agentbinary§3.8 step 3 no signal: nothing to recover and nothing created': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    message: 'candidate crashed',
    result: { rolledBack: false, current: 'green' },
    signal: 'absent',
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary§6.5 step 3 the candidate failed: failure and recoveryRequired recorded, current → last-good':
    {
      setup: switchedToGreen,
      message: '  candidate crashed 5 times  ',
      result: { rolledBack: true, current: 'blue' },
      signal: {
        failure: 'candidate crashed 5 times',
        recoveryRequired: true,
        switchCommitted: true,
      },
      after: { current: 'blue', lastGood: 'blue' },
    },
  'agentbinary§3.8 step 3 a blank message records the default': {
    setup: switchedToGreen,
    message: ' \n ',
    result: { rolledBack: true, current: 'blue' },
    signal: { failure: defaultRecoveryMessage, recoveryRequired: true },
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.8 step 3 no message records the default': {
    setup: switchedToGreen,
    message: undefined,
    result: { rolledBack: true, current: 'blue' },
    signal: { failure: defaultRecoveryMessage, recoveryRequired: true },
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.8 a failure recorded earlier (by the judge) is kept, not overwritten': {
    setup: (l) =>
      switchedToGreen(l, { failure: 'the daemon started from /x', recoveryRequired: true }),
    message: 'candidate crashed',
    result: { rolledBack: true, current: 'blue' },
    signal: { failure: 'the daemon started from /x', recoveryRequired: true },
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.8 recovery restores last-good even for an upgrade killed before it switched': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await writeSignal(l, { candidatePath: l.paths.blue, previousPath: l.paths.green });
    },
    message: 'agent unit failed',
    result: { rolledBack: true, current: 'blue' },
    signal: { failure: 'agent unit failed', recoveryRequired: true },
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary#19 no last-good: an error, and the failure stays recorded for a retry': {
    setup: async (l) => {
      await switchedToGreen(l);
      await rm(l.paths.lastGood);
    },
    message: 'candidate crashed',
    error: /resolve last-good agent binary/,
    signal: { failure: 'candidate crashed', recoveryRequired: true },
    after: { current: 'green', lastGood: 'missing' },
  },
};

describe('recoverAgentUpgrade (spec agentbinary §3.8; every row runs twice)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    for (let run = 1; run <= 2; run++) {
      const recovered = recoverAgentUpgrade(l.paths, l.signalFile, row.message, log);
      if (row.error !== undefined) {
        await expect(recovered).rejects.toMatchObject({
          code: 'UPGRADE_FAILED',
          message: expect.stringMatching(row.error) as unknown,
        });
      } else {
        const current = row.result?.current;
        expect(await recovered).toEqual({
          rolledBack: row.result?.rolledBack,
          current: current === undefined ? undefined : at(l, current),
        });
      }
      if (row.signal === 'absent') expect(await signalBytes(l)).toBeUndefined();
      else expect(await readSignal(l)).toMatchObject({ operationName: operationId, ...row.signal });
      expect(await selection(l)).toEqual(row.after);
      await assertInvariants(l);
    }
  });

  it('agentbinary§6.5 a candidate that never starts: staged, recovered, then last-good records the failure once', async () => {
    const l = await newLayout();
    await blueOnly(l);
    await stageAndSwitch(fakeStageHost(l).options);
    expect(await selection(l)).toEqual({ current: 'green', lastGood: 'blue' });

    // The candidate crashes until the start limit; the recovery unit runs last-good's recovery.
    await recoverAgentUpgrade(
      l.paths,
      l.signalFile,
      'aks-flex-node-agent hit its start limit',
      log,
    );
    expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    await assertInvariants(l);

    const lastGoodDaemon = fakeJudgeHost(l, l.paths.blue, 'last-good-daemon');
    expect(await judgeStartedUpgrade(lastGoodDaemon.options)).toBe('rolled-back');
    expect(await judgeStartedUpgrade(lastGoodDaemon.options)).toBe('no-signal');
    assertRecords(lastGoodDaemon.records);
    expect(lastGoodDaemon.records).toEqual([
      expect.objectContaining({
        state: 'rolled-back',
        message: 'aks-flex-node-agent hit its start limit',
        fromPath: l.paths.blue,
        toPath: l.paths.green,
        toVersion: 'v2',
      }),
    ]);
    expect(lastGoodDaemon.restarts).toBe(0);
    expect(await signalBytes(l)).toBeUndefined();
    expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    await assertInvariants(l);
  });
});
