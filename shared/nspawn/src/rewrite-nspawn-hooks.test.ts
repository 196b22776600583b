import { statSync } from 'node:fs';
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentBinaryPathsUnder, type ExecutableCopy } from '@aks-flex-node/agentbinary';
import { copyFile } from 'node:fs/promises';
import { fileIdentity } from '@aks-flex-node/fs';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { installNspawnLifecycleHelper } from './install-nspawn-lifecycle-helper.js';
import { nspawnHookFiles } from './nspawn-hook-files.js';
import { machinesWithHooks, rewriteNspawnHooks } from './rewrite-nspawn-hooks.js';

const log = createSilentLogger();

describe('the nspawn lifecycle helper and hooks on a host', () => {
  let tmp: string;
  let paths: HostPaths;
  let executable: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'nspawn-hooks-'));
    paths = hostPathsUnder(tmp);
    executable = path.join(tmp, 'running-agent');
    await writeFile(executable, '#!/bin/sh\necho this-release\n', { mode: 0o755 });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('daemon#6.1 installs the running executable under the root as it resolves (linked: /usr/local)', async () => {
    await mkdir(paths.legacy, { recursive: true });
    await mkdir(paths.parent, { recursive: true });
    await symlink(paths.legacy, paths.root);
    const helper = await installNspawnLifecycleHelper(paths, log, executable);
    expect(helper).toBe(path.join(paths.legacy, 'bin/unbounded-agent-nspawn-lifecycle'));
    expect(await readFile(helper, 'utf8')).toBe(await readFile(executable, 'utf8'));
    expect((await stat(helper)).mode & 0o777).toBe(0o755);
  });

  it('#378 replaces a helper an earlier release left (its own file, mode 0644) with a link to the executable', async () => {
    const helper = path.join(paths.root, 'bin/unbounded-agent-nspawn-lifecycle');
    await mkdir(path.dirname(helper), { recursive: true });
    await writeFile(helper, '#!/bin/sh\necho earlier-release\n', { mode: 0o644 });
    await installNspawnLifecycleHelper(paths, log, executable);
    expect(await readFile(helper, 'utf8')).toContain('this-release');
    expect((await stat(helper)).mode & 0o777).toBe(0o755);
  });

  it('issue26 the helper is a hard link to the executable (no third copy), resolved through a link, and a second start changes nothing', async () => {
    const current = path.join(tmp, 'current');
    await symlink(executable, current);
    const helper = await installNspawnLifecycleHelper(paths, log, current);
    const linked = await lstat(helper);
    expect(linked.isFile()).toBe(true);
    expect(linked.ino).toBe((await stat(executable)).ino);
    expect(linked.nlink).toBe(2);
    await installNspawnLifecycleHelper(paths, log, current);
    const again = await lstat(helper);
    expect(again.ino).toBe(linked.ino);
    expect(again.ctimeMs).toBe(linked.ctimeMs);
    expect(await readdir(path.dirname(helper))).toEqual(['unbounded-agent-nspawn-lifecycle']);
  });

  it('issue26 an upgraded executable (a new file renamed over the slot) gets the helper relinked; the old helper kept running bytes', async () => {
    const helper = await installNspawnLifecycleHelper(paths, log, executable);
    const staged = path.join(tmp, 'staged');
    await writeFile(staged, '#!/bin/sh\necho next-release\n', { mode: 0o755 });
    await rename(staged, executable);
    expect(await readFile(helper, 'utf8')).toContain('this-release');
    await installNspawnLifecycleHelper(paths, log, executable);
    expect((await lstat(helper)).ino).toBe((await stat(executable)).ino);
    expect(await readFile(helper, 'utf8')).toContain('next-release');
  });

  // /dev/shm is a tmpfs apart from the temp directory here; where it is not,
  // the two could share an inode and there is no copy to test.
  const otherMount = statSync('/dev/shm', { throwIfNoEntry: false });
  const itOnOtherMount = it.skipIf(
    otherMount === undefined || otherMount.dev === statSync(os.tmpdir()).dev,
  );
  itOnOtherMount(
    'issue26 an executable on another mount is copied (0755), and a copy changed in place after it was checked is found and replaced',
    () =>
      withAgentOnOtherMount(async (elsewhere) => {
        const helper = await installNspawnLifecycleHelper(paths, log, elsewhere);
        expect((await lstat(helper)).nlink).toBe(1);
        expect((await stat(helper)).mode & 0o777).toBe(0o755);
        // Checked again: identical, and the digests are now remembered.
        await installNspawnLifecycleHelper(paths, log, elsewhere);
        await writeFile(helper, '#!/bin/sh\necho tampered\n');
        await installNspawnLifecycleHelper(paths, log, elsewhere);
        expect(await readFile(helper, 'utf8')).toContain('this-release');
      }),
  );

  // The first start of a binary from elsewhere copies it under the root
  // (installHostBinary) and the layout keeps that file as the current slot.
  itOnOtherMount(
    'issue26 an executable on another mount links the helper to the copy this start installed, recognised by its inode, and remembers it',
    () =>
      withAgentOnOtherMount(async (elsewhere) => {
        const slots = agentBinaryPathsUnder(paths.root);
        const copy = await installAsCurrent(elsewhere, slots.blue, slots.current);
        const helper = await installNspawnLifecycleHelper(paths, log, elsewhere, copy);
        const linked = await lstat(helper);
        expect([String(linked.dev), String(linked.ino)]).toEqual([copy.dev, copy.ino]);
        // A later refresh without the copy (the pre-start route's) finds the
        // helper recorded as the executable's: neither rewritten nor relinked.
        await installNspawnLifecycleHelper(paths, log, elsewhere);
        const again = await lstat(helper);
        expect([again.ino, again.ctimeMs]).toEqual([linked.ino, linked.ctimeMs]);
      }),
  );

  itOnOtherMount(
    'issue26 a current slot that is no longer the installed copy (an upgrade renamed another file over it) is not linked: the helper is copied',
    () =>
      withAgentOnOtherMount(async (elsewhere) => {
        const slots = agentBinaryPathsUnder(paths.root);
        const copy = await installAsCurrent(elsewhere, slots.blue, slots.current);
        const staged = path.join(tmp, 'staged');
        await writeFile(staged, '#!/bin/sh\necho next-release\n', { mode: 0o755 });
        await rename(staged, slots.blue);
        const helper = await installNspawnLifecycleHelper(paths, log, elsewhere, copy);
        const installed = await lstat(helper);
        expect(String(installed.ino)).not.toBe(copy.ino);
        expect(installed.ino).not.toBe((await stat(slots.blue)).ino);
        expect(await readFile(helper, 'utf8')).toContain('this-release');
      }),
  );

  it('daemon#6.4 writes no hooks on a host without machines, but installs the helper', async () => {
    const result = await rewriteNspawnHooks(paths.root, paths, log, { executable });
    expect(result).toEqual({
      helper: path.join(paths.root, 'bin/unbounded-agent-nspawn-lifecycle'),
      machines: [],
      changed: false,
    });
    expect(await readFile(result.helper, 'utf8')).toContain('this-release');
  });

  it('daemon#5.2 rewrites the hooks of the machines that have them to name the helper under the new root', async () => {
    const legacyHelper = path.join(paths.legacy, 'bin/unbounded-agent-nspawn-lifecycle');
    const first = await rewriteNspawnHooks(paths.legacy, paths, log, {
      executable,
      machines: ['kube2'],
    });
    expect(first.changed).toBe(true);
    expect(await machinesWithHooks(paths)).toEqual(['kube2']);
    const files = nspawnHookFiles(paths, 'kube2');
    expect(await readFile(files.overrideFile, 'utf8')).toContain(
      `${legacyHelper} nspawn-lifecycle`,
    );

    const moved = await rewriteNspawnHooks(paths.root, paths, log, { executable });
    const movedHelper = path.join(paths.root, 'bin/unbounded-agent-nspawn-lifecycle');
    expect(moved).toEqual({ helper: movedHelper, machines: ['kube2'], changed: true });
    for (const file of [files.regenerateConfigUnit, files.overrideFile]) {
      const content = await readFile(file, 'utf8');
      expect(content).toContain(`${movedHelper} nspawn-lifecycle`);
      expect(content).not.toContain(paths.legacy);
    }
    // The hooks never name a helper that is not there.
    expect(await readFile(movedHelper, 'utf8')).toContain('this-release');
    // Idempotent: the same root again changes nothing.
    expect((await rewriteNspawnHooks(paths.root, paths, log, { executable })).changed).toBe(false);
    // kube1 has no hooks and gets none.
    expect(await machinesWithHooks(paths)).toEqual(['kube2']);
  });

  it('a missing executable fails before any hook names the helper', async () => {
    await expect(
      rewriteNspawnHooks(paths.root, paths, log, {
        executable: path.join(tmp, 'gone'),
        machines: ['kube1'],
      }),
    ).rejects.toMatchObject({ code: 'HOST_ROOT_IO' });
    expect(await machinesWithHooks(paths)).toEqual([]);
  });
});

/** Copies `executable` to `slot` and points `current` at it, as a first start does; the copy as installHostBinary reports it. */
async function installAsCurrent(
  executable: string,
  slot: string,
  current: string,
): Promise<ExecutableCopy> {
  const executableBefore = await fileIdentity(executable);
  await mkdir(path.dirname(slot), { recursive: true });
  await copyFile(executable, slot);
  await symlink(slot, current);
  const { dev, ino } = await fileIdentity(slot);
  return { executable, executableBefore, dev, ino };
}

/** Runs `test` with an agent executable ("this-release") in a directory of /dev/shm, removed afterwards whatever happened. */
async function withAgentOnOtherMount(test: (elsewhere: string) => Promise<void>): Promise<void> {
  const shm = await mkdtemp('/dev/shm/nspawn-hooks-');
  try {
    const elsewhere = path.join(shm, 'running-agent');
    await writeFile(elsewhere, '#!/bin/sh\necho this-release\n', { mode: 0o755 });
    await test(elsewhere);
  } finally {
    await rm(shm, { recursive: true, force: true });
  }
}
