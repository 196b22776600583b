import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSilentLogger } from '@aks-flex-node/log';
import { agentBinaryPathsUnder, type AgentBinaryPaths } from './agent-binary-paths.js';
import { ensureAgentBinaryLayout } from './ensure-layout.js';

const log = createSilentLogger();
let tmp: string;
let paths: AgentBinaryPaths;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'layout-'));
  paths = agentBinaryPathsUnder(path.join(tmp, 'opt/unbounded/agent'));
  await mkdir(path.dirname(paths.binary), { recursive: true });
  await mkdir(paths.slotDir, { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function executable(file: string, content: string) {
  await writeFile(file, content);
  await chmod(file, 0o755);
}

/** The invariants of a healthy layout (spec agentbinary 1.4): binary → current → slot, last-good → slot. */
async function assertHealthyLayout(expectedSlot: string) {
  expect(await realpath(paths.current)).toBe(expectedSlot);
  expect(await realpath(paths.binary)).toBe(expectedSlot);
  expect(await readlink(paths.binary)).toBe(paths.current);
  expect(path.isAbsolute(await readlink(paths.current))).toBe(true);
  expect(path.isAbsolute(await readlink(paths.lastGood))).toBe(true);
}

describe('ensureAgentBinaryLayout', () => {
  it('agentbinary#22 a legacy plain binary seeds blue; twice is the same', async () => {
    await executable(paths.binary, 'legacy bytes');
    const first = await ensureAgentBinaryLayout(paths, log);
    expect(first.changed).toBe(true);
    const second = await ensureAgentBinaryLayout(paths, log);
    expect(second.changed).toBe(false);
    await assertHealthyLayout(paths.blue);
    expect(await realpath(paths.lastGood)).toBe(paths.blue);
    expect(await readFile(paths.blue, 'utf8')).toBe('legacy bytes');
    expect((await lstat(paths.blue)).mode & 0o777).toBe(0o755);
  });

  it('agentbinary#23 blue and current only (interrupted init) completes last-good and the binary', async () => {
    await executable(paths.blue, 'blue');
    await symlink(paths.blue, paths.current);
    await ensureAgentBinaryLayout(paths, log);
    await assertHealthyLayout(paths.blue);
    expect(await realpath(paths.lastGood)).toBe(paths.blue);
  });

  it('agentbinary#101 a dangling current is re-pointed at the runnable last-good (issue 22), which is kept', async () => {
    await executable(paths.blue, 'blue');
    await executable(paths.green, 'green');
    await symlink(path.join(paths.slotDir, 'missing'), paths.current);
    await symlink(paths.green, paths.lastGood);
    await ensureAgentBinaryLayout(paths, log);
    await assertHealthyLayout(paths.green);
    expect(await realpath(paths.lastGood)).toBe(paths.green);
  });

  it('issue22#3 a current naming an empty file is re-pointed at last-good; a last-good that cannot run follows current', async () => {
    await executable(paths.blue, 'blue');
    await writeFile(paths.green, '', { mode: 0o755 });
    await symlink(paths.green, paths.current);
    await symlink(paths.blue, paths.lastGood);
    await ensureAgentBinaryLayout(paths, log);
    await assertHealthyLayout(paths.blue);
    await rm(paths.lastGood);
    await symlink(paths.green, paths.lastGood);
    await ensureAgentBinaryLayout(paths, log);
    expect(await realpath(paths.lastGood)).toBe(paths.blue);
  });

  it('refuses with a clear error when no executable binary exists, and creates nothing', async () => {
    await writeFile(paths.binary, 'not executable');
    await expect(ensureAgentBinaryLayout(paths, log)).rejects.toThrow(
      /no executable agent binary found/,
    );
    await expect(lstat(paths.current)).rejects.toThrow(/ENOENT/);
    await expect(lstat(paths.lastGood)).rejects.toThrow(/ENOENT/);
  });

  it('agentbinary#100 current and last-good naming the plain binary are treated as uninitialised', async () => {
    await executable(paths.binary, 'legacy bytes');
    await symlink(paths.binary, paths.current);
    await symlink(paths.binary, paths.lastGood);
    await ensureAgentBinaryLayout(paths, log);
    await assertHealthyLayout(paths.blue);
    expect(await realpath(paths.lastGood)).toBe(paths.blue);
    expect(await readFile(paths.blue, 'utf8')).toBe('legacy bytes');
  });

  it('agentbinary#110 a plain last-good binary is kept in the spare slot before the plain path becomes a link', async () => {
    await executable(paths.binary, 'old release');
    await executable(paths.blue, 'new release');
    await symlink(paths.blue, paths.current);
    await symlink(paths.binary, paths.lastGood);
    await ensureAgentBinaryLayout(paths, log);
    await ensureAgentBinaryLayout(paths, log);
    await assertHealthyLayout(paths.blue);
    expect(await realpath(paths.lastGood)).toBe(paths.green);
    expect(await readFile(paths.green, 'utf8')).toBe('old release');
  });

  // The first start of a downloaded binary installs it at the plain path and
  // seeds blue from it: one 131 MB write, the slot a second name of that file.
  it('a plain binary root owns at exactly 0755 seeds blue as a second name of the same file', async () => {
    await executable(paths.binary, 'installed by this daemon');
    const plain = await lstat(paths.binary);
    await ensureAgentBinaryLayout(paths, log);
    await assertHealthyLayout(paths.blue);
    const blue = await lstat(paths.blue);
    expect([blue.dev, blue.ino]).toEqual([plain.dev, plain.ino]);
    // The plain path is now a symlink, so the slot is the file's only name.
    expect(blue.nlink).toBe(1);
    expect(blue.mode & 0o7777).toBe(0o755);
  });

  it('the spare slot keeps a plain last-good root owns at 0755 as a second name too', async () => {
    await executable(paths.binary, 'old release');
    const plain = await lstat(paths.binary);
    await executable(paths.blue, 'new release');
    await symlink(paths.blue, paths.current);
    await symlink(paths.binary, paths.lastGood);
    await ensureAgentBinaryLayout(paths, log);
    const green = await lstat(paths.green);
    expect([green.dev, green.ino]).toEqual([plain.dev, plain.ino]);
    expect(await realpath(paths.lastGood)).toBe(paths.green);
  });

  // A slot runs as root: it never keeps a file another user could rewrite.
  it.each([
    { what: 'another user owns', uid: 1000, mode: 0o755 },
    { what: 'is group-writable', uid: 0, mode: 0o775 },
    { what: 'is setuid', uid: 0, mode: 0o4755 },
  ])(
    'a plain binary that $what is copied into blue, root-owned and 0755',
    async ({ uid, mode }) => {
      await executable(paths.binary, 'left by someone');
      await chown(paths.binary, uid, 0);
      await chmod(paths.binary, mode);
      const plain = await lstat(paths.binary);
      await ensureAgentBinaryLayout(paths, log);
      await assertHealthyLayout(paths.blue);
      const blue = await lstat(paths.blue);
      expect(blue.ino).not.toBe(plain.ino);
      expect([blue.uid, blue.mode & 0o7777]).toEqual([0, 0o755]);
      expect(await readFile(paths.blue, 'utf8')).toBe('left by someone');
    },
  );
});
