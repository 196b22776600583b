import { mkdir, readdir, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replaceSymlinkAtomic } from './replace-symlink-atomic.js';
import { makeTempDir } from './test-support.js';

describe('replaceSymlinkAtomic', () => {
  it.each([
    ['creates a new link with the exact target text', () => Promise.resolve()],
    ['replaces an existing link', async (link: string) => replaceSymlinkAtomic(link, '/old')],
    ['replaces a regular file', async (link: string) => writeFile(link, 'file')],
  ])('%s', async (_name, setup) => {
    const tmp = await makeTempDir();
    const link = path.join(tmp, 'agent');
    await setup(link);
    await replaceSymlinkAtomic(link, '/usr/local');
    expect(await readlink(link)).toBe('/usr/local');
    expect(await readdir(tmp)).toEqual(['agent']);
  });

  it('refuses to replace a directory and leaves it and its content alone', async () => {
    const tmp = await makeTempDir();
    const dir = path.join(tmp, 'agent');
    await mkdir(dir);
    await writeFile(path.join(dir, 'kept'), 'x');
    await expect(replaceSymlinkAtomic(dir, '/usr/local')).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: dir,
      message: expect.stringContaining(`link ${dir} to /usr/local: `) as unknown,
    });
    expect(await readdir(dir)).toEqual(['kept']);
    expect(await readdir(tmp)).toEqual(['agent']);
  });

  it('names the link and the target when the directory is missing', async () => {
    const tmp = await makeTempDir();
    const link = path.join(tmp, 'missing/agent');
    await expect(replaceSymlinkAtomic(link, '/usr/local')).rejects.toThrow(
      `link ${link} to /usr/local: ENOENT`,
    );
  });
});
