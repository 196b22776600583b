import { lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeOwned } from './remove-owned.js';
import { makeTempDir } from './test-support.js';

describe('removeOwned (spec hostroot §3.9)', () => {
  it.each([
    ['removes an owned file', (t: string) => writeFile(path.join(t, 'x'), '')],
    [
      'removes a dangling link (lstat sees it)',
      (t: string) => symlink(path.join(t, 'gone'), path.join(t, 'x')),
    ],
    ['succeeds on a missing path', () => Promise.resolve()],
  ])('%s', async (_name, setup) => {
    const tmp = await makeTempDir();
    await setup(tmp);
    await removeOwned(path.join(tmp, 'x'));
    await expect(lstat(path.join(tmp, 'x'))).rejects.toThrow(/ENOENT/);
  });

  it('reports a non-empty directory, naming it', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'x'));
    await writeFile(path.join(tmp, 'x/y'), '');
    await expect(removeOwned(path.join(tmp, 'x'))).rejects.toThrow(
      `remove ${path.join(tmp, 'x')}: ENOTEMPTY`,
    );
  });

  it('reports a file in the way (ENOTDIR) rather than taking it as missing', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), '');
    await expect(removeOwned(path.join(tmp, 'file/x'))).rejects.toThrow(/ENOTDIR/);
  });
});
