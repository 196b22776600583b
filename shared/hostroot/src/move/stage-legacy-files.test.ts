import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readlink, realpath, rename, rm, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostLayoutFiles,
  lastGoodLinkFile,
  localDnsNetworkFile,
  nspawnLifecycleFile,
  recoveryScriptFile,
} from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { hostRootState } from '../host-root-state.js';
import {
  assertArtifactsKept,
  kindAt,
  legacyHost,
  link,
  log,
  markers,
  newLayout,
  permissions,
  snapshotTree,
  touch,
  withUmask,
} from '../test-fixtures.js';
import { migrateHostRoot } from '../migrate-host-root.js';
import { stageLegacyFiles } from './stage-legacy-files.js';
import { swapInCopy } from './swap-in-copy.js';

describe('stageLegacyFiles', () => {
  it('hostroot#47 a link at the staging name is replaced by a real directory, never followed', async () => {
    const l = await legacyHost();
    const elsewhere = path.join(l.tmp, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, l.staging);
    await stageLegacyFiles(l.paths, hostLayoutFiles());
    expect(await kindAt(l.staging)).toBe('directory');
    expect(await snapshotTree(elsewhere)).toEqual({});
  });

  it('hostroot#48 copies files with their modes, rebases links, marks the copy, and changes nothing in use', async () => {
    const l = await legacyHost();
    await touch(path.join(l.staging, 'bin/stale'), 'stale');
    await stageLegacyFiles(l.paths, hostLayoutFiles());
    const copied: [string, string, number][] = [
      [blueSlotFile, 'blue', 0o755],
      [greenSlotFile, 'green', 0o755],
      [nspawnLifecycleFile, 'helper', 0o755],
      [recoveryScriptFile, 'recover', 0o755],
      [localDnsNetworkFile, 'dns', 0o700],
    ];
    for (const [rel, content, mode] of copied) {
      const file = path.join(l.staging, rel);
      expect(await readFile(file, 'utf8')).toBe(content);
      expect(permissions((await stat(file)).mode)).toBe(mode);
    }
    const final = path.join(await realpath(l.parent), 'agent');
    expect(await readlink(path.join(l.staging, currentLinkFile))).toBe(
      path.join(final, greenSlotFile),
    );
    expect(await readlink(path.join(l.staging, lastGoodLinkFile))).toBe(
      path.join(final, blueSlotFile),
    );
    expect(await readlink(path.join(l.staging, binaryFile))).toBe(
      path.join(final, currentLinkFile),
    );
    expect(await kindAt(path.join(l.staging, '.moving'))).toBe('file');
    expect(permissions((await stat(path.join(l.staging, '.moving'))).mode)).toBe(0o644);
    expect(await kindAt(path.join(l.staging, 'bin/stale'))).toBe('missing');
    expect(await kindAt(path.join(l.staging, 'bin/other-tool'))).toBe('missing');
    expect(await hostRootState(l.paths)).toBe('linked');
    expect(await readFile(path.join(l.legacy, currentLinkFile), 'utf8')).toBe('green');
    await assertArtifactsKept(l);
  });

  it('hostroot#49 links written through a linked legacy root or its target are both rebased', async () => {
    const l = await newLayout();
    const real = path.join(l.tmp, 'var/usrlocal');
    await mkdir(path.dirname(real), { recursive: true });
    await rename(l.legacy, real);
    await symlink(real, l.legacy);
    await touch(path.join(real, blueSlotFile), 'blue');
    await touch(path.join(real, greenSlotFile), 'green');
    await link(path.join(real, currentLinkFile), path.join(l.legacy, greenSlotFile));
    await link(path.join(real, lastGoodLinkFile), path.join(real, blueSlotFile));
    await migrateHostRoot(l.paths, log, markers);
    await stageLegacyFiles(l.paths, hostLayoutFiles());
    const final = path.join(await realpath(l.parent), 'agent');
    expect(await readlink(path.join(l.staging, currentLinkFile))).toBe(
      path.join(final, greenSlotFile),
    );
    expect(await readlink(path.join(l.staging, lastGoodLinkFile))).toBe(
      path.join(final, blueSlotFile),
    );
  });

  it('hostroot#91 a file missing from the legacy root gets nothing in the copy, not even its directory', async () => {
    const l = await legacyHost();
    await stageLegacyFiles(l.paths, [localDnsNetworkFile, 'lib/absent/file']);
    await stageLegacyFiles(l.paths, [blueSlotFile, 'lib/absent/file']);
    expect(await kindAt(path.join(l.staging, 'lib/absent'))).toBe('missing');
    expect(await kindAt(path.join(l.staging, 'libexec'))).toBe('missing');
    expect(await readFile(path.join(l.staging, blueSlotFile), 'utf8')).toBe('blue');
  });

  it('hostroot#92 under umask 077 the copy and its directories are 0755 and binaries keep 0755', async () => {
    const l = await legacyHost();
    await withUmask(0o077, () => stageLegacyFiles(l.paths, hostLayoutFiles()));
    for (const dir of ['', 'bin', 'lib', 'lib/aks-flex-node', 'libexec']) {
      expect(permissions((await stat(path.join(l.staging, dir))).mode), dir).toBe(0o755);
    }
    expect(permissions((await stat(path.join(l.staging, greenSlotFile))).mode)).toBe(0o755);
  });

  it('hostroot#48 a fifo among the layout is refused, naming it', async () => {
    const l = await legacyHost();
    execFileSync('mkfifo', [path.join(l.legacy, 'bin/fifo')]);
    await expect(stageLegacyFiles(l.paths, ['bin/fifo'])).rejects.toThrow(
      `${path.join(l.legacy, 'bin/fifo')} is neither a file nor a symlink`,
    );
  });
});

describe('swapInCopy', () => {
  it('hostroot#51 the copy replaces the link: moving, staging gone, links lead into the copy', async () => {
    const l = await legacyHost();
    await rm(path.join(l.legacy, 'libexec'), { recursive: true });
    await swapInCopy(l.paths, log, hostLayoutFiles());
    expect(await hostRootState(l.paths)).toBe('moving');
    expect(await kindAt(path.join(l.root, 'libexec'))).toBe('missing');
    expect(await kindAt(l.staging)).toBe('missing');
    expect(await realpath(path.join(l.root, currentLinkFile))).toBe(
      path.join(await realpath(l.root), greenSlotFile),
    );
    expect(await readFile(path.join(l.legacy, currentLinkFile), 'utf8')).toBe('green');
    await assertArtifactsKept(l);
  });
});
