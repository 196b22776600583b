import { chmod, stat } from 'node:fs/promises';
import path from 'node:path';
import { blueSlotFile } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { migrateHostRoot } from './migrate-host-root.js';
import { prepareHostRoot } from './prepare-host-root.js';
import {
  assertArtifactsKept,
  kindAt,
  link,
  log,
  markers,
  newLayout,
  permissions,
  stageArtifacts,
  touch,
  withUmask,
  type Layout,
} from './test-fixtures.js';

interface PrepareCase {
  setup: (l: Layout) => Promise<void>;
  subdirs: string[];
  umask?: number;
  check: (l: Layout, relabeled: string[]) => Promise<void>;
}

const mode = async (p: string): Promise<number> => permissions((await stat(p)).mode);

const cases: Record<string, PrepareCase> = {
  'hostroot#24 under umask 077 the parent, root and subdirs are 0755 and the root is relabelled': {
    setup: () => Promise.resolve(),
    subdirs: ['bin', 'libexec'],
    umask: 0o077,
    check: async (l, relabeled) => {
      for (const dir of [
        l.parent,
        l.root,
        path.join(l.root, 'bin'),
        path.join(l.root, 'libexec'),
      ]) {
        expect(await mode(dir)).toBe(0o755);
      }
      expect(relabeled).toEqual([l.root]);
    },
  },
  'hostroot#25 staged artifacts and the parent mode are kept, and only the root is relabelled': {
    setup: stageArtifacts,
    subdirs: ['bin'],
    check: async (l, relabeled) => {
      expect(await kindAt(path.join(l.root, 'bin'))).toBe('directory');
      expect(relabeled).toEqual([l.root]);
      await assertArtifactsKept(l);
    },
  },
  'hostroot#26 a migrated host is left alone: nothing created under legacy, no relabel': {
    setup: async (l) => {
      await touch(path.join(l.legacy, blueSlotFile), 'blue');
      await migrateHostRoot(l.paths, log, markers);
    },
    subdirs: ['libexec'],
    check: async (l, relabeled) => {
      expect(await kindAt(path.join(l.legacy, 'libexec'))).toBe('missing');
      expect(relabeled).toEqual([]);
    },
  },
  "an operator's link at the root is left alone too": {
    setup: async (l) => {
      await touch(path.join(l.tmp, 'data/agent/.keep'));
      await link(l.root, path.join(l.tmp, 'data/agent'));
    },
    subdirs: ['bin'],
    check: async (l, relabeled) => {
      expect(await kindAt(path.join(l.tmp, 'data/agent/bin'))).toBe('missing');
      expect(relabeled).toEqual([]);
    },
  },
  'an existing root and subdir keep their modes': {
    setup: async (l) => {
      await touch(path.join(l.root, 'bin/.keep'));
      await chmod(path.join(l.root, 'bin'), 0o700);
    },
    subdirs: ['bin'],
    check: async (l) => {
      expect(await mode(path.join(l.root, 'bin'))).toBe(0o700);
    },
  },
};

describe('prepareHostRoot (spec hostroot §3.6)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const relabeled: string[] = [];
    const relabel = (root: string): Promise<void> => {
      relabeled.push(root);
      return Promise.resolve();
    };
    const prepare = (): Promise<void> => prepareHostRoot(l.paths, log, row.subdirs, { relabel });
    await (row.umask === undefined ? prepare() : withUmask(row.umask, prepare));
    await row.check(l, relabeled);
  });

  it('a file at the root fails on the first subdir, naming it, and nothing is relabelled', async () => {
    const l = await newLayout();
    await touch(l.root, 'stray', 0o644);
    const relabeled: string[] = [];
    const relabel = (root: string): Promise<void> => {
      relabeled.push(root);
      return Promise.resolve();
    };
    await expect(prepareHostRoot(l.paths, log, ['bin'], { relabel })).rejects.toThrow(
      `inspect ${path.join(l.root, 'bin')}: ENOTDIR`,
    );
    expect(relabeled).toEqual([]);
  });
});
