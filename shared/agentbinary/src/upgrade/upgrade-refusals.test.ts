import { statSync } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readlink,
  rm,
  statfs,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hostPathsUnder } from '@aks-flex-node/layout';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import { checkUpgradeSpace, guardLegacySeed, planUpgradeWrites } from './upgrade-refusals.js';

/** A layout with blue current (and green, when given, an earlier upgrade's binary) of `bytes` each. */
async function layout(options: { green: boolean; binElsewhere?: string }, bytes = 1000) {
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

describe('the space an upgrade needs (issue 28 item 5)', () => {
  it('issue26 the writes in order: download, staged candidate, archive gone, old slot freed; the helper, a hard link, takes none', async () => {
    const paths = await layout({ green: true });
    const steps = await planUpgradeWrites({
      paths,
      candidateBytes: 1200,
      download: { dir: '/var/lib/aks-flex-node/downloads', bytes: 500 },
    });
    expect(steps.map(({ bytes, what }) => [bytes, what])).toEqual([
      [500, 'the downloaded archive'],
      [1200, 'the staged candidate'],
      [-500, 'the archive removed'],
      // green is the slot the candidate replaces: its old binary is freed by the rename.
      [-1000, 'the old slot'],
    ]);
  });

  // /dev/shm is a tmpfs apart from the temp directory here, as a helper
  // directory on its own mount would be: the helper is a copy there.
  const otherMount = statSync('/dev/shm', { throwIfNoEntry: false });
  it.skipIf(otherMount === undefined || otherMount.dev === statSync(os.tmpdir()).dev)(
    'issue28#5 with the helper on another mount than the slots: the helper refreshed as a copy, then the old one freed',
    async () => {
      const shm = await mkdtemp('/dev/shm/upgrade-space-');
      onTestFinished(() => rm(shm, { recursive: true, force: true }));
      const paths = await layout({ green: true, binElsewhere: shm });
      const steps = await planUpgradeWrites({
        paths,
        candidateBytes: 1200,
        download: { dir: '/var/lib/aks-flex-node/downloads', bytes: 500 },
      });
      expect(steps.map(({ bytes, what }) => [bytes, what])).toEqual([
        [500, 'the downloaded archive'],
        [1200, 'the staged candidate'],
        [-500, 'the archive removed'],
        // green is the slot the candidate replaces: its old binary is freed by the rename.
        [-1000, 'the old slot'],
        [1200, 'the refreshed nspawn lifecycle helper'],
        [-1000, 'the old helper'],
      ]);
    },
  );

  it('issue28#5 a first upgrade (no old slot to free) needs two candidates at once', async () => {
    const paths = await layout({ green: false });
    const steps = await planUpgradeWrites({ paths, candidateBytes: 1200 });
    expect(steps.find((step) => step.what === 'the old slot')?.bytes).toBe(-0);
  });

  it('issue28#5 more than the filesystem has free is refused with the numbers and the path', async () => {
    const paths = await layout({ green: false });
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

const log = createSilentLogger();

/** Host paths under a temp dir; `released` makes the host root a real installation (legacy released). */
async function host(released: boolean) {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'legacy-seed-guard-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = hostPathsUnder(tmp);
  await mkdir(path.dirname(paths.legacySeed), { recursive: true });
  const lib = released
    ? path.join(paths.root, 'lib/aks-flex-node')
    : path.join(paths.legacy, 'lib/aks-flex-node');
  await mkdir(lib, { recursive: true });
  await writeFile(path.join(lib, 'aks-flex-node-blue'), '#!/bin/sh\n');
  await chmod(path.join(lib, 'aks-flex-node-blue'), 0o755);
  if (!released) {
    await mkdir(path.dirname(paths.root), { recursive: true });
    await symlink(paths.legacy, paths.root);
  }
  const executable = path.join(tmp, 'elsewhere');
  await writeFile(executable, '#!/bin/sh\n');
  await chmod(executable, 0o755);
  return { paths, executable, tmp };
}

describe('guardLegacySeed (spec daemon §9.1)', () => {
  it('daemon#18 released, nothing at the seed: allowed', async () => {
    const h = await host(true);
    await expect(guardLegacySeed(h.paths, log)).resolves.toBeUndefined();
  });

  it('daemon#19 released, a regular executable seed: removed, allowed', async () => {
    const h = await host(true);
    await writeFile(h.paths.legacySeed, '#!/bin/sh\n');
    await chmod(h.paths.legacySeed, 0o755);
    await guardLegacySeed(h.paths, log);
    await expect(lstat(h.paths.legacySeed)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('daemon#20 released, a link to an executable: refused naming /usr/local/sbin, the link kept', async () => {
    const h = await host(true);
    await symlink(h.executable, h.paths.legacySeed);
    const error = await guardLegacySeed(h.paths, log).catch((e: unknown) => e);
    expect(isAgentError(error, 'UPGRADE_REFUSED')).toBe(true);
    expect((error as { hint?: string }).hint).toContain('/usr/local/sbin');
    expect(await readlink(h.paths.legacySeed)).toBe(h.executable);
  });

  it('daemon#21 released, a dangling link: allowed, kept', async () => {
    const h = await host(true);
    await symlink(path.join(h.tmp, 'gone'), h.paths.legacySeed);
    await guardLegacySeed(h.paths, log);
    expect(await readlink(h.paths.legacySeed)).toBe(path.join(h.tmp, 'gone'));
  });

  it('daemon#22 released, a link to a file that is not executable: allowed, kept', async () => {
    const h = await host(true);
    const plain = path.join(h.tmp, 'plain');
    await writeFile(plain, 'x');
    await symlink(plain, h.paths.legacySeed);
    await guardLegacySeed(h.paths, log);
    expect(await readlink(h.paths.legacySeed)).toBe(plain);
  });

  it('daemon#23 not released (linked), an executable seed: allowed, kept', async () => {
    const h = await host(false);
    await writeFile(h.paths.legacySeed, '#!/bin/sh\n');
    await chmod(h.paths.legacySeed, 0o755);
    await guardLegacySeed(h.paths, log);
    expect((await lstat(h.paths.legacySeed)).isFile()).toBe(true);
  });

  it('daemon#24 a host root that cannot be inspected: refused', async () => {
    const h = await host(true);
    // The root's parent is a file: stat of the root fails with ENOTDIR.
    await rm(path.dirname(h.paths.root), { recursive: true });
    await writeFile(path.dirname(h.paths.root), 'not a directory');
    const error = await guardLegacySeed(h.paths, log).catch((e: unknown) => e);
    expect(isAgentError(error, 'UPGRADE_REFUSED') || isAgentError(error, 'HOST_ROOT_IO')).toBe(
      true,
    );
  });
});
