import { readlink, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { canonicalPath } from '@aks-flex-node/fs';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  localDnsNetworkFile,
  nspawnLifecycleFile,
  recoveryScriptFile,
} from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { hostRootState, type HostRootState } from './host-root-state.js';
import { migrateHostRoot } from './migrate-host-root.js';
import {
  assertArtifactsKept,
  kindAt,
  link,
  log,
  markers,
  newLayout,
  permissions,
  snapshotTree,
  stageArtifacts,
  touch,
  withUmask,
  type Layout,
} from './test-fixtures.js';

interface MigrateCase {
  setup: (l: Layout) => Promise<void>;
  /** The state after migrate (after each of the two runs). */
  state: HostRootState;
  /** A substring of the refusal; absent when migrate must succeed. */
  refusal?: string;
  umask?: number;
  check?: (l: Layout) => Promise<void>;
}

const legacyBlue = (l: Layout): Promise<void> => touch(path.join(l.legacy, blueSlotFile), 'blue');
const rootBlue = (l: Layout): Promise<void> => touch(path.join(l.root, blueSlotFile), 'blue');

const cases: Record<string, MigrateCase> = {
  'hostroot#5 a fresh host is left alone and the root is not created': {
    setup: () => Promise.resolve(),
    state: 'absent',
  },
  'hostroot#6 a legacy blue slot makes the root a link to the legacy root': {
    setup: legacyBlue,
    state: 'linked',
    check: async (l) => {
      expect(await readlink(l.root)).toBe(l.legacy);
    },
  },
  'hostroot#7 linking keeps the artifacts staged in the parent and its 0750 mode': {
    setup: async (l) => {
      await stageArtifacts(l);
      await legacyBlue(l);
    },
    state: 'linked',
  },
  'hostroot#8 a fresh host with artifacts in the parent gets no root': {
    setup: stageArtifacts,
    state: 'absent',
  },
  'hostroot#9 a dangling legacy current link counts as an installation': {
    setup: (l) => link(path.join(l.legacy, currentLinkFile), 'missing'),
    state: 'linked',
  },
  'hostroot#10 helpers an older reset leaves, and an operator link in sbin, are not an installation':
    {
      setup: async (l) => {
        await touch(path.join(l.legacy, recoveryScriptFile));
        await touch(path.join(l.legacy, nspawnLifecycleFile));
        await touch(path.join(l.legacy, localDnsNetworkFile));
        await link(path.join(l.legacy, 'sbin/aks-flex-node'), path.join(l.root, binaryFile));
      },
      state: 'absent',
    },
  'hostroot#11 only the seeded bin/aks-flex-node is not an installation': {
    setup: (l) => touch(path.join(l.legacy, binaryFile), 'seed'),
    state: 'absent',
  },
  'hostroot#12 an unfinished move is left as it is, a directory': {
    setup: async (l) => {
      await rootBlue(l);
      await touch(path.join(l.root, '.moving'), '', 0o644);
      await legacyBlue(l);
    },
    state: 'moving',
  },
  'hostroot#13 a new installation stays a directory': {
    setup: rootBlue,
    state: 'installed',
  },
  'hostroot#14 installed under both roots is refused': {
    setup: async (l) => {
      await rootBlue(l);
      await legacyBlue(l);
    },
    state: 'installed',
    refusal: 'installed under both',
  },
  'hostroot#15 an empty root directory beside a legacy installation is refused': {
    setup: async (l) => {
      await touch(path.join(l.root, '.keep'));
      await legacyBlue(l);
    },
    state: 'installed',
    refusal: 'also exists',
  },
  'hostroot#16 a link to the legacy root with nothing installed behind it is removed': {
    setup: (l) => link(l.root, l.legacy),
    state: 'absent',
  },
  "hostroot#17 an operator's link to another directory is kept": {
    setup: async (l) => {
      await touch(path.join(l.tmp, 'data/agent/.keep'));
      await link(l.root, path.join(l.tmp, 'data/agent'));
    },
    state: 'other',
    check: async (l) => {
      expect(await readlink(l.root)).toBe(path.join(l.tmp, 'data/agent'));
    },
  },
  'hostroot#18 a regular file at the root is refused as not a directory': {
    setup: (l) => touch(l.root, 'stray', 0o644),
    state: 'other',
    refusal: 'is not a directory',
    check: async (l) => {
      expect(await kindAt(l.root)).toBe('file');
    },
  },
  'hostroot#19 linking creates the parent 0755 under umask 077': {
    setup: legacyBlue,
    state: 'linked',
    umask: 0o077,
    check: async (l) => {
      expect(permissions((await stat(l.parent)).mode)).toBe(0o755);
      expect(permissions((await stat(path.join(l.tmp, 'opt'))).mode)).toBe(0o755);
    },
  },
  'hostroot#89 a migrated host stays migrated under repeated migrate': {
    setup: legacyBlue,
    state: 'linked',
    check: async (l) => {
      await migrateHostRoot(l.paths, log, markers);
      expect(await hostRootState(l.paths)).toBe('linked');
    },
  },
  'hostroot#90 after migrate the root current link resolves to the blue slot under canonical(root)':
    {
      setup: async (l) => {
        await legacyBlue(l);
        await link(path.join(l.legacy, currentLinkFile), path.join(l.legacy, blueSlotFile));
      },
      state: 'linked',
      check: async (l) => {
        const expected = path.join(await canonicalPath(l.root), blueSlotFile);
        expect(await realpath(path.join(l.root, currentLinkFile))).toBe(expected);
      },
    },
};

/** Migrate never changes the legacy root, the staged artifacts, or leaves a staging dir. */
async function assertInvariants(l: Layout, legacyBefore: Record<string, string>): Promise<void> {
  expect(await snapshotTree(l.legacy)).toEqual(legacyBefore);
  expect(await kindAt(l.staging)).toBe('missing');
  if (l.artifactsStaged) await assertArtifactsKept(l);
}

async function expectRefused(l: Layout, refusal: string): Promise<void> {
  const error: unknown = await migrateHostRoot(l.paths, log, markers).catch((e: unknown) => e);
  expect(error).toMatchObject({ name: 'AgentError', code: 'HOST_ROOT_REFUSED', path: l.root });
  const { message, hint } = error as { message: string; hint: string };
  expect(message).toContain(refusal);
  expect(message).toContain(l.root);
  expect(message).toContain(l.legacy);
  expect(hint).not.toBe('');
}

describe('migrateHostRoot (spec hostroot §3.5; every row runs migrate twice)', () => {
  it.each(Object.entries(cases))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const legacyBefore = await snapshotTree(l.legacy);
    const migrate = (): Promise<void> => migrateHostRoot(l.paths, log, markers);
    for (let run = 1; run <= 2; run++) {
      if (row.refusal !== undefined) await expectRefused(l, row.refusal);
      else if (row.umask !== undefined) await withUmask(row.umask, migrate);
      else await migrate();
      expect(await hostRootState(l.paths)).toBe(row.state);
      await assertInvariants(l, legacyBefore);
    }
    await row.check?.(l);
  });

  it('names the refusal for an installation under both roots with a next step that exists', async () => {
    const l = await newLayout();
    await rootBlue(l);
    await legacyBlue(l);
    await expect(migrateHostRoot(l.paths, log, markers)).rejects.toThrow(
      `the agent is installed under both ${l.legacy} and ${l.root}; stop the agent, remove the installation you do not keep (its lib/aks-flex-node), then run \`aks-flex-node start\` again`,
    );
  });

  it('reports a root it cannot inspect (a file in its path) instead of taking it as absent', async () => {
    const l = await newLayout();
    await writeFile(path.join(l.tmp, 'opt'), 'file in the way');
    await legacyBlue(l);
    await expect(migrateHostRoot(l.paths, log, markers)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      message: expect.stringContaining(`inspect ${l.root}: ENOTDIR`) as unknown,
    });
  });
});
