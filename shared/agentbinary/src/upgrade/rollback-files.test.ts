import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { UpgradeSignal } from '@aks-flex-node/api';
import { describe, expect, it } from 'vitest';
import { rollbackUpgradeFiles } from './rollback-files.js';
import {
  assertInvariants,
  at,
  blueOnly,
  installedLayout,
  link,
  log,
  newLayout,
  operationId,
  selection,
  signalBytes,
  writeSignal,
  type BinaryName,
  type Layout,
} from './test-fixtures.js';

interface RollbackCase {
  setup: (l: Layout) => Promise<void>;
  /** The signal the caller passes; undefined is "no signal". */
  signal: (l: Layout) => Partial<UpgradeSignal> | undefined;
  /** What the first and the second run report; omitted when the rollback must fail. */
  rolledBack?: readonly [boolean, boolean];
  error?: RegExp;
  after: { current: BinaryName | 'missing'; lastGood: BinaryName | 'missing' };
}

const cases: Record<string, RollbackCase> = {
  'agentbinary§3.5 step 1 no signal: nothing to do': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: () => undefined,
    rolledBack: [false, false],
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary#18 a candidate but no switch, and the candidate not active: no downgrade': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: (l) => ({ candidatePath: l.paths.blue, previousPath: l.paths.green }),
    rolledBack: [false, false],
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary#12 a committed switch to green goes back to last-good blue': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
    rolledBack: [true, true],
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.5 step 2 the candidate active without a commit (killed in between) goes back': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: (l) => ({ candidatePath: l.paths.green }),
    // Once current is back this signal no longer shows a switch, so a retry reports no
    // rollback; judge and recovery record recoveryRequired first, so theirs still do.
    rolledBack: [true, false],
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.5 step 3 recoveryRequired restores last-good even with no candidate recorded': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: () => ({ recoveryRequired: true, failure: 'daemon failed' }),
    rolledBack: [true, true],
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.5 step 5 current already on last-good counts as rolled back and is left as it is':
    {
      setup: (l) => installedLayout(l, 'blue', 'blue'),
      signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
      rolledBack: [true, true],
      after: { current: 'blue', lastGood: 'blue' },
    },
  'agentbinary#51 a candidate that only looks like a slot is never taken as active': {
    setup: (l) => installedLayout(l, 'lookAlike', 'blue'),
    signal: (l) => ({ candidatePath: l.lookAlike }),
    rolledBack: [false, false],
    after: { current: 'lookAlike', lastGood: 'blue' },
  },
  'agentbinary#19 recoveryRequired and no last-good is an error naming last-good': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await rm(l.paths.lastGood);
    },
    signal: (l) => ({ candidatePath: l.paths.green, recoveryRequired: true }),
    error: /resolve last-good agent binary .*: it is missing or dangling/,
    after: { current: 'green', lastGood: 'missing' },
  },
  'agentbinary#13 a committed switch to blue with no links at all is an error': {
    setup: async (l) => {
      await blueOnly(l);
    },
    signal: (l) => ({ candidatePath: l.paths.blue, switchCommitted: true }),
    error: /resolve last-good agent binary/,
    after: { current: 'missing', lastGood: 'missing' },
  },
  'agentbinary§3.5 step 4 a dangling last-good is an error, never a target': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await link(l.paths.lastGood, path.join(l.paths.slotDir, 'aks-flex-node-removed'));
    },
    signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
    error: /missing or dangling/,
    after: { current: 'green', lastGood: 'missing' },
  },
};

describe('rollbackUpgradeFiles (spec agentbinary §3.5; every row runs twice)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const fields = row.signal(l);
    const signal = fields === undefined ? undefined : { operationName: operationId, ...fields };
    // The caller's signal file is the caller's: a rollback never writes or removes it.
    if (signal !== undefined) await writeSignal(l, signal);
    const signalBefore = await signalBytes(l);
    for (let run = 1; run <= 2; run++) {
      if (row.error !== undefined) {
        await expect(rollbackUpgradeFiles(l.paths, signal, log)).rejects.toMatchObject({
          code: 'UPGRADE_FAILED',
          path: l.paths.lastGood,
          message: expect.stringMatching(row.error) as unknown,
        });
      } else {
        const result = await rollbackUpgradeFiles(l.paths, signal, log);
        expect(result).toEqual({
          rolledBack: row.rolledBack?.[run - 1],
          current: row.after.current === 'missing' ? undefined : at(l, row.after.current),
        });
      }
      expect(await selection(l)).toEqual(row.after);
      expect(await signalBytes(l)).toBe(signalBefore);
      await assertInvariants(l);
    }
  });
});
