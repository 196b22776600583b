import { lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeIfEmpty } from './remove-if-empty.js';
import { makeTempDir } from './test-support.js';

describe('removeIfEmpty (spec hostroot §3.9)', () => {
  it('removes an empty directory', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'dir'));
    await removeIfEmpty(path.join(tmp, 'dir'));
    await expect(lstat(path.join(tmp, 'dir'))).rejects.toThrow(/ENOENT/);
  });

  it('keeps a directory that holds something, as success', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'dir'));
    await writeFile(path.join(tmp, 'dir/file'), '');
    await removeIfEmpty(path.join(tmp, 'dir'));
    expect((await lstat(path.join(tmp, 'dir/file'))).isFile()).toBe(true);
  });

  it('accepts a directory that is already gone', async () => {
    const tmp = await makeTempDir();
    await expect(removeIfEmpty(path.join(tmp, 'missing'))).resolves.toBeUndefined();
  });

  it('reports other errors, naming the path', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), '');
    await expect(removeIfEmpty(path.join(tmp, 'file/sub'))).rejects.toThrow(
      `remove ${path.join(tmp, 'file/sub')}: ENOTDIR`,
    );
  });
});
