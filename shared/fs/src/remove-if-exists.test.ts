import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeIfExists } from './remove-if-exists.js';
import { makeTempDir } from './test-support.js';

describe('removeIfExists (Go os.Remove, spec hostroot §3.9)', () => {
  it.each([
    ['removes a file', (t: string) => writeFile(path.join(t, 'x'), '')],
    ['removes an empty directory', (t: string) => mkdir(path.join(t, 'x'))],
    ['tolerates a missing path', () => Promise.resolve()],
  ])('%s', async (_name, setup) => {
    const tmp = await makeTempDir();
    await setup(tmp);
    await removeIfExists(path.join(tmp, 'x'));
    await expect(lstat(path.join(tmp, 'x'))).rejects.toThrow(/ENOENT/);
  });

  it('removes a symlink, not what it leads to', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'target'), 'kept');
    await symlink(path.join(tmp, 'target'), path.join(tmp, 'link'));
    await removeIfExists(path.join(tmp, 'link'));
    await expect(lstat(path.join(tmp, 'link'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(path.join(tmp, 'target'), 'utf8')).toBe('kept');
  });

  it('reports ENOTEMPTY for a directory that holds something', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'dir'));
    await writeFile(path.join(tmp, 'dir/file'), '');
    await expect(removeIfExists(path.join(tmp, 'dir'))).rejects.toThrow(
      `remove ${path.join(tmp, 'dir')}: ENOTEMPTY`,
    );
  });

  it('treats ENOTDIR (a file in the way) as an error, not as already gone', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), '');
    await expect(removeIfExists(path.join(tmp, 'file/child'))).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: path.join(tmp, 'file/child'),
      message: expect.stringContaining('ENOTDIR') as unknown,
    });
  });
});
