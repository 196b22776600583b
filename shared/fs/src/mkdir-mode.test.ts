import { chmod, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mkdirMode } from './mkdir-mode.js';
import { makeTempDir, permissions, withUmask } from './test-support.js';

describe('mkdirMode (spec hostroot §3.8)', () => {
  it('creates the directory and each missing parent with the exact mode under umask 077', async () => {
    const tmp = await makeTempDir();
    await withUmask(0o077, () => mkdirMode(path.join(tmp, 'a/b/c'), 0o755));
    for (const dir of ['a', 'a/b', 'a/b/c']) {
      expect(permissions((await stat(path.join(tmp, dir))).mode)).toBe(0o755);
    }
  });

  it('keeps the mode of an existing directory', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'kept'));
    await chmod(path.join(tmp, 'kept'), 0o750);
    await mkdirMode(path.join(tmp, 'kept/new'), 0o755);
    expect(permissions((await stat(path.join(tmp, 'kept'))).mode)).toBe(0o750);
    expect(permissions((await stat(path.join(tmp, 'kept/new'))).mode)).toBe(0o755);
  });

  it('accepts an existing file at the name and changes nothing', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), 'x', { mode: 0o600 });
    await mkdirMode(path.join(tmp, 'file'), 0o755);
    expect(permissions((await stat(path.join(tmp, 'file'))).mode)).toBe(0o600);
  });

  it('accepts a link to an existing directory (stat follows it)', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'target'));
    await symlink(path.join(tmp, 'target'), path.join(tmp, 'link'));
    await expect(mkdirMode(path.join(tmp, 'link'), 0o755)).resolves.toBeUndefined();
  });

  it('refuses a dangling link at the name instead of following it', async () => {
    const tmp = await makeTempDir();
    await symlink(path.join(tmp, 'elsewhere'), path.join(tmp, 'planted'));
    await expect(mkdirMode(path.join(tmp, 'planted'), 0o755)).rejects.toThrow(
      `${path.join(tmp, 'planted')} appeared while it was being created, and is not a directory`,
    );
    await expect(stat(path.join(tmp, 'elsewhere'))).rejects.toThrow(/ENOENT/);
  });

  it('reports a file in the way of a parent as an inspect error naming the path', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), 'x');
    await expect(mkdirMode(path.join(tmp, 'file/sub'), 0o755)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: path.join(tmp, 'file/sub'),
      message: expect.stringMatching(/^inspect .*file\/sub: ENOTDIR/) as unknown,
    });
  });
});
