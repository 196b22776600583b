import path from 'node:path';
import { canonicalPath } from '@aks-flex-node/fs';
import { blueSlotFile } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { hostRootState } from './host-root-state.js';
import { migrateHostRoot } from './migrate-host-root.js';
import { plannedHostRoot } from './planned-host-root.js';
import {
  kindAt,
  link,
  log,
  markers,
  newLayout,
  snapshotTree,
  touch,
  type Layout,
} from './test-fixtures.js';

interface PlannedCase {
  setup: (l: Layout) => Promise<void>;
  expected: (l: Layout) => Promise<string>;
  check?: (l: Layout, planned: string) => Promise<void>;
}

const legacyBlue = (l: Layout): Promise<void> => touch(path.join(l.legacy, blueSlotFile), 'blue');

const cases: Record<string, PlannedCase> = {
  'hostroot#20 a fresh host plans canonical(root) and the root is not created': {
    setup: () => Promise.resolve(),
    expected: (l) => canonicalPath(l.root),
    check: async (l) => {
      expect(await kindAt(l.root)).toBe('missing');
    },
  },
  'hostroot#21 an unmigrated legacy host plans canonical(legacy) and the root is not created': {
    setup: legacyBlue,
    expected: (l) => canonicalPath(l.legacy),
    check: async (l) => {
      expect(await kindAt(l.root)).toBe('missing');
    },
  },
  'hostroot#22 a migrated host plans canonical(legacy)': {
    setup: async (l) => {
      await legacyBlue(l);
      await migrateHostRoot(l.paths, log, markers);
    },
    expected: (l) => canonicalPath(l.legacy),
  },
  'hostroot#23 a dead link stays in place, and after migrate canonical(root) equals the plan': {
    setup: (l) => link(l.root, l.legacy),
    expected: async (l) => path.join(await canonicalPath(l.parent), 'agent'),
    check: async (l, planned) => {
      expect(await hostRootState(l.paths)).toBe('linked');
      await migrateHostRoot(l.paths, log, markers);
      expect(await canonicalPath(l.root)).toBe(planned);
    },
  },
};

describe('plannedHostRoot (spec hostroot §3.3)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const before = await snapshotTree(l.tmp);
    const planned = await plannedHostRoot(l.paths, markers);
    expect(planned).toBe(await row.expected(l));
    // Planned only predicts: nothing on the host changes.
    expect(await snapshotTree(l.tmp)).toEqual(before);
    await row.check?.(l, planned);
  });

  it('falls back to canonical(root) when the state cannot be read', async () => {
    const l = await newLayout();
    await touch(path.join(l.tmp, 'opt'), 'file in the way', 0o644);
    await legacyBlue(l);
    expect(await plannedHostRoot(l.paths, markers)).toBe(await canonicalPath(l.root));
  });
});
