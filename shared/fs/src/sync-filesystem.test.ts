import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { syncDirectory } from './sync-directory.js';
import { syncFilesystem, syncFilesystems } from './sync-filesystem.js';
import { makeTempDir } from './test-support.js';

describe('syncFilesystem and syncFilesystems', () => {
  it('syncs the filesystem of an existing path with coreutils sync -f', async () => {
    const tmp = await makeTempDir();
    await expect(syncFilesystem(tmp)).resolves.toBeUndefined();
  });

  it('hostroot#80 two paths on one filesystem give one sync', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'a'), '');
    const synced: string[] = [];
    const syncOne = (target: string): Promise<void> => {
      synced.push(target);
      return Promise.resolve();
    };
    await syncFilesystems([tmp, path.join(tmp, 'a')], { syncOne });
    expect(synced).toEqual([tmp]);
  });

  it('hostroot#80 a sync error is returned', async () => {
    const tmp = await makeTempDir();
    const syncOne = (): Promise<void> => Promise.reject(new Error('syncfs: EIO'));
    await expect(syncFilesystems([tmp], { syncOne })).rejects.toThrow('syncfs: EIO');
  });

  it.each([
    ['hostroot#81 syncFilesystem on a missing path is an error', (p: string) => syncFilesystem(p)],
    [
      'hostroot#81 syncFilesystems on a missing path is an error',
      (p: string) => syncFilesystems([p]),
    ],
  ])('%s', async (_name, sync) => {
    const missing = path.join(await makeTempDir(), 'missing');
    await expect(sync(missing)).rejects.toThrow(`sync the filesystem of ${missing}: ENOENT`);
  });
});

describe('syncDirectory', () => {
  it('syncs an existing directory', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'dir'));
    await expect(syncDirectory(path.join(tmp, 'dir'))).resolves.toBeUndefined();
  });

  it('names the path when it is not a directory', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), '');
    await expect(syncDirectory(path.join(tmp, 'file'))).rejects.toThrow(
      `open ${path.join(tmp, 'file')}: ENOTDIR`,
    );
  });
});
