import { chmod, lstat, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hostPathsUnder } from '@aks-flex-node/layout';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { guardLegacySeed } from './guard-legacy-seed.js';

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
