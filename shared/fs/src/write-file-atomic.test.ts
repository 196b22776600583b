import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, permissions, withUmask } from './test-support.js';
import { writeFileAtomic } from './write-file-atomic.js';

describe('writeFileAtomic', () => {
  it('hostroot#79 creates nested parents and writes the content with mode 0600', async () => {
    const tmp = await makeTempDir();
    const target = path.join(tmp, 'etc/aks-flex-node/host-root-agents');
    await writeFileAtomic(target, 'abc\n', { mode: 0o600 });
    expect(await readFile(target, 'utf8')).toBe('abc\n');
    expect(permissions((await stat(target)).mode)).toBe(0o600);
    expect(permissions((await stat(path.dirname(target))).mode)).toBe(0o755);
  });

  it('applies the mode exactly under umask 077, for the file and its new parents', async () => {
    const tmp = await makeTempDir();
    const target = path.join(tmp, 'a/b/file');
    await withUmask(0o077, () => writeFileAtomic(target, 'x', { mode: 0o644 }));
    expect(permissions((await stat(target)).mode)).toBe(0o644);
    expect(permissions((await stat(path.join(tmp, 'a'))).mode)).toBe(0o755);
  });

  it('replaces an existing file and leaves no temp file beside it', async () => {
    const tmp = await makeTempDir();
    const target = path.join(tmp, 'file');
    await writeFile(target, 'old');
    await writeFileAtomic(target, 'new', { mode: 0o640 });
    expect(await readFile(target, 'utf8')).toBe('new');
    expect(await readdir(tmp)).toEqual(['file']);
  });

  it('fails on a directory at the name, names the path, and removes its temp file', async () => {
    const tmp = await makeTempDir();
    const target = path.join(tmp, 'dir');
    await mkdir(target);
    await writeFile(path.join(target, 'inside'), 'kept');
    await expect(writeFileAtomic(target, 'x', { mode: 0o644 })).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: target,
      message: expect.stringContaining(`write ${target}: `) as unknown,
    });
    expect(await readdir(tmp)).toEqual(['dir']);
    expect(await readFile(path.join(target, 'inside'), 'utf8')).toBe('kept');
  });
});
