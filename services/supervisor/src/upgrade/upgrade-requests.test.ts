import { statSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, statfs, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentBinaryPathsUnder, type AgentBinaryPaths } from '@aks-flex-node/agentbinary';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkUpgradeSpace, planUpgradeWrites, refuseRunningSlot } from './upgrade-requests.js';

/** Both slots, and `current` naming `current` when given. */
async function layoutWith(current: 'blue' | 'green' | undefined): Promise<AgentBinaryPaths> {
  const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'running-slot-')));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = agentBinaryPathsUnder(path.join(tmp, 'opt/unbounded/agent'));
  await mkdir(paths.slotDir, { recursive: true });
  await writeFile(paths.blue, '#!/bin/sh\n', { mode: 0o755 });
  await writeFile(paths.green, '#!/bin/sh\n', { mode: 0o755 });
  if (current !== undefined) await symlink(paths[current], paths.current);
  return paths;
}

describe('refuseRunningSlot', () => {
  it.each<[string, 'blue' | 'green' | undefined, 'blue' | 'green']>([
    ['agentbinary§1.4 the daemon runs what current names: the other slot is free', 'blue', 'blue'],
    [
      'agentbinary§3.2.1 no current yet: initialisation decides, nothing to refuse',
      undefined,
      'blue',
    ],
  ])('%s', async (_name, current, running) => {
    const paths = await layoutWith(current);
    await expect(refuseRunningSlot(paths, paths[running])).resolves.toBeUndefined();
  });

  it('agentbinary§3.6.2 current moved back without a restart: the running slot is refused', async () => {
    const paths = await layoutWith('blue');
    await expect(refuseRunningSlot(paths, paths.green)).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: paths.green,
    });
  });
});

/** A layout with blue current (and green, when given, an earlier upgrade's binary) of `bytes` each. */
async function spaceLayout(options: { green: boolean; binElsewhere?: string }, bytes = 1000) {
  const root = await mkdtemp(path.join(os.tmpdir(), 'upgrade-space-'));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  const paths = agentBinaryPathsUnder(root);
  await mkdir(paths.slotDir, { recursive: true });
  if (options.binElsewhere === undefined) await mkdir(path.join(root, 'bin'));
  else await symlink(options.binElsewhere, path.join(root, 'bin'));
  await writeFile(paths.blue, Buffer.alloc(bytes));
  if (options.green) await writeFile(paths.green, Buffer.alloc(bytes));
  await writeFile(path.join(root, 'bin/unbounded-agent-nspawn-lifecycle'), Buffer.alloc(bytes));
  await symlink(paths.blue, paths.current);
  return paths;
}

/** An archive upgrade's planned writes, as [bytes, what]. */
async function archiveUpgradeWrites(paths: AgentBinaryPaths): Promise<[number, string][]> {
  const steps = await planUpgradeWrites({
    paths,
    candidateBytes: 1200,
    download: { dir: '/var/lib/aks-flex-node/downloads', bytes: 500 },
  });
  return steps.map(({ bytes, what }) => [bytes, what]);
}

/** The writes on the download's and the slots' file systems, whatever the helper's is. */
const downloadAndSlotWrites: [number, string][] = [
  [500, 'the downloaded archive'],
  [1200, 'the staged candidate'],
  [-500, 'the archive removed'],
  // green is the slot the candidate replaces: its old binary is freed by the rename.
  [-1000, 'the old slot'],
];

describe('the space an upgrade needs (issue 28 item 5)', () => {
  it('issue26 the writes in order: download, staged candidate, archive gone, old slot freed; the helper, a hard link, takes none', async () => {
    const paths = await spaceLayout({ green: true });
    expect(await archiveUpgradeWrites(paths)).toEqual(downloadAndSlotWrites);
  });

  // /dev/shm is a tmpfs apart from the temp directory here, as a helper
  // directory on its own mount would be: the helper is a copy there.
  const otherMount = statSync('/dev/shm', { throwIfNoEntry: false });
  it.skipIf(otherMount === undefined || otherMount.dev === statSync(os.tmpdir()).dev)(
    'issue28#5 with the helper on another mount than the slots: the helper refreshed as a copy, then the old one freed',
    async () => {
      const shm = await mkdtemp('/dev/shm/upgrade-space-');
      onTestFinished(() => rm(shm, { recursive: true, force: true }));
      const paths = await spaceLayout({ green: true, binElsewhere: shm });
      expect(await archiveUpgradeWrites(paths)).toEqual([
        ...downloadAndSlotWrites,
        [1200, 'the refreshed nspawn lifecycle helper'],
        [-1000, 'the old helper'],
      ]);
    },
  );

  it('issue28#5 a first upgrade (no old slot to free) needs two candidates at once', async () => {
    const paths = await spaceLayout({ green: false });
    const steps = await planUpgradeWrites({ paths, candidateBytes: 1200 });
    expect(steps.find((step) => step.what === 'the old slot')?.bytes).toBe(-0);
  });

  it('issue28#5 more than the filesystem has free is refused with the numbers and the path', async () => {
    const paths = await spaceLayout({ green: false });
    const info = await statfs(paths.slotDir);
    const free = info.bavail * info.bsize;
    await expect(
      checkUpgradeSpace({ paths, candidateBytes: free + 1_048_576 }),
    ).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: paths.slotDir,
      message: expect.stringMatching(
        /^not enough free space for the AgentUpgrade on the filesystem holding \S+: it needs \d+ MiB \(the staged candidate\) and \d+ MiB is free$/,
      ) as unknown,
    });
    await expect(checkUpgradeSpace({ paths, candidateBytes: 4096 })).resolves.toBeUndefined();
  });
});
