import { mkdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { blueSlotFile } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { hostRootState } from './host-root-state.js';
import { removeHostRoot } from './remove-host-root.js';
import {
  assertArtifactsKept,
  kindAt,
  link,
  log,
  newLayout,
  snapshotTree,
  stageArtifacts,
  touch,
  type Layout,
} from './test-fixtures.js';

interface RemoveCase {
  setup: (l: Layout) => Promise<void>;
  check: (l: Layout) => Promise<void>;
}

async function emptyDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

const rootGone = async (l: Layout): Promise<void> => {
  expect(await kindAt(l.root)).toBe('missing');
};

const cases: Record<string, RemoveCase> = {
  'hostroot#27 an absent root is success': {
    setup: () => Promise.resolve(),
    check: rootGone,
  },
  'hostroot#28 the migration link is removed and the legacy root is untouched': {
    setup: async (l) => {
      await touch(path.join(l.legacy, 'bin/other-tool'), 'other');
      await link(l.root, l.legacy);
    },
    check: async (l) => {
      await rootGone(l);
      expect(await snapshotTree(l.legacy)).toEqual({
        bin: 'dir 755',
        'bin/other-tool': 'file 755 other',
      });
    },
  },
  "hostroot#29 an operator's link to another directory is kept": {
    setup: async (l) => {
      await touch(path.join(l.tmp, 'data/agent/.keep'));
      await link(l.root, path.join(l.tmp, 'data/agent'));
    },
    check: async (l) => {
      expect(await readlink(l.root)).toBe(path.join(l.tmp, 'data/agent'));
    },
  },
  'hostroot#30 a root holding only empty bin and libexec is removed': {
    setup: async (l) => {
      await emptyDir(path.join(l.root, 'bin'));
      await emptyDir(path.join(l.root, 'libexec'));
    },
    check: rootGone,
  },
  'hostroot#31 an empty bin goes, and lib/other/keep keeps lib and the root': {
    setup: async (l) => {
      await emptyDir(path.join(l.root, 'bin'));
      await touch(path.join(l.root, 'lib/other/keep'));
    },
    check: async (l) => {
      expect(await kindAt(path.join(l.root, 'lib/other/keep'))).toBe('file');
      expect(await hostRootState(l.paths)).toBe('installed');
    },
  },
  'hostroot#32 the moving marker does not keep the root': {
    setup: async (l) => {
      await emptyDir(path.join(l.root, 'bin'));
      await touch(path.join(l.root, '.moving'), '', 0o644);
    },
    check: rootGone,
  },
  'hostroot#33 the link and a staging copy are both removed': {
    setup: async (l) => {
      await link(l.root, l.legacy);
      await touch(path.join(l.staging, blueSlotFile), 'blue');
    },
    check: rootGone,
  },
  'hostroot#34 beside staged artifacts only the link is removed': {
    setup: async (l) => {
      await stageArtifacts(l);
      await link(l.root, l.legacy);
    },
    check: rootGone,
  },
  'hostroot#35 beside staged artifacts only the root directory is removed': {
    setup: async (l) => {
      await stageArtifacts(l);
      await emptyDir(path.join(l.root, 'bin'));
    },
    check: rootGone,
  },
  'an empty lib/aks-flex-node (our agent-only dir, two levels down) does not keep the root': {
    setup: async (l) => {
      await emptyDir(path.join(l.root, 'lib/aks-flex-node'));
      await emptyDir(path.join(l.root, 'bin'));
    },
    check: rootGone,
  },
  'a kept file in lib/aks-flex-node keeps that dir and the root': {
    setup: (l) => touch(path.join(l.root, 'lib/aks-flex-node/operator.conf')),
    check: async (l) => {
      expect(await kindAt(path.join(l.root, 'lib/aks-flex-node/operator.conf'))).toBe('file');
    },
  },
  'a link to a directory inside the root is not descended into, and keeps the root': {
    setup: async (l) => {
      await emptyDir(path.join(l.tmp, 'elsewhere'));
      await link(path.join(l.root, 'linked'), path.join(l.tmp, 'elsewhere'));
    },
    check: async (l) => {
      expect(await kindAt(path.join(l.root, 'linked'))).toBe('symlink');
      expect(await kindAt(path.join(l.tmp, 'elsewhere'))).toBe('directory');
    },
  },
  'a stray file at the root is kept': {
    setup: (l) => touch(l.root, 'stray', 0o644),
    check: async (l) => {
      expect(await kindAt(l.root)).toBe('file');
    },
  },
  'a staging name that is a link is unlinked, not followed': {
    setup: async (l) => {
      await touch(path.join(l.tmp, 'precious/file'), 'keep');
      await link(l.staging, path.join(l.tmp, 'precious'));
    },
    check: async (l) => {
      expect(await kindAt(path.join(l.tmp, 'precious/file'))).toBe('file');
    },
  },
};

/** Spec §5.5 invariants, checked after every row and after the second run. */
async function assertInvariants(l: Layout, parentExisted: boolean): Promise<void> {
  if (parentExisted) expect(await kindAt(l.parent)).toBe('directory');
  if (l.artifactsStaged) await assertArtifactsKept(l);
  expect(await kindAt(l.staging)).toBe('missing');
  expect(await kindAt(path.join(l.root, 'bin'))).toBe('missing');
  expect(await kindAt(path.join(l.legacy, 'bin'))).toBe('directory');
}

describe('removeHostRoot (spec hostroot §3.11; every row runs remove twice)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const parentExisted = (await kindAt(l.parent)) === 'directory';
    for (let run = 1; run <= 2; run++) {
      await removeHostRoot(l.paths, log);
      await assertInvariants(l, parentExisted);
    }
    await row.check(l);
  });
});
