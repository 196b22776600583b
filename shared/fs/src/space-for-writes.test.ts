import { link, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bytesFreedByReplacing, filesystemOf, findSpaceShortfall } from './space-for-writes.js';

async function tempDir(): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'space-for-writes-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  return tmp;
}

async function freeBytes(dir: string): Promise<number> {
  const info = await statfs(dir);
  return info.bavail * info.bsize;
}

describe('findSpaceShortfall', () => {
  it('judges the most the steps hold at once, not their sum: a write freed before the next fits', async () => {
    const tmp = await tempDir();
    const part = Math.floor((await freeBytes(tmp)) * 0.6);
    const write = (what: string) => ({ dir: tmp, bytes: part, what });
    const free = { dir: tmp, bytes: -part, what: 'the first removed' };
    await expect(findSpaceShortfall([write('first'), free, write('second')])).resolves.toBe(
      undefined,
    );
    const short = await findSpaceShortfall([write('first'), write('second')]);
    expect(short).toMatchObject({ dir: tmp, neededBytes: 2 * part, writes: ['first', 'second'] });
    expect(short?.freeBytes).toBeLessThan(2 * part);
  });

  it('a directory a later step creates is judged on its nearest existing ancestor', async () => {
    const tmp = await tempDir();
    const unborn = path.join(tmp, 'not/yet');
    await expect(filesystemOf(unborn)).resolves.toMatchObject({ dir: tmp });
    const short = await findSpaceShortfall([
      { dir: unborn, bytes: (await freeBytes(tmp)) + 2 ** 30, what: 'the download' },
    ]);
    expect(short).toMatchObject({ dir: tmp, writes: ['the download'] });
  });
});

describe('bytesFreedByReplacing', () => {
  it('a file no other name keeps frees its size; a hard-linked one or nothing frees none', async () => {
    const tmp = await tempDir();
    const file = path.join(tmp, 'slot');
    await writeFile(file, Buffer.alloc(1234));
    expect(await bytesFreedByReplacing(file)).toBe(1234);
    expect(await bytesFreedByReplacing(path.join(tmp, 'missing'))).toBe(0);
    await link(file, path.join(tmp, 'helper'));
    expect(await bytesFreedByReplacing(file)).toBe(0);
  });
});
