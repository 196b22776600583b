import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@aks-flex-node/log';
import { afterAll, describe, expect, it } from 'vitest';
import { hasRoomForSpeculativeCopy } from './speculative-copy-room.js';

const log = createLogger({ level: 'silent' });
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function legacyWith(files: Record<string, number>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'copy-room-'));
  made.push(dir);
  for (const [name, size] of Object.entries(files)) {
    await writeFile(path.join(dir, name), '');
    // Sparse: the apparent size counts, as a real binary's would, without using the disk.
    await truncate(path.join(dir, name), size);
  }
  return dir;
}

describe('hasRoomForSpeculativeCopy', () => {
  it('allows the early copy when the parent has room for the files twice over', async () => {
    const legacy = await legacyWith({ blue: 1 << 20, green: 1 << 20 });
    expect(await hasRoomForSpeculativeCopy(tmpdir(), legacy, ['blue', 'green'], log)).toBe(true);
  });

  it('refuses it when twice the files exceed the free space (a tight host hashes first)', async () => {
    // 8 TiB apparent (ext4 allows up to 16): more than any test machine's free space.
    const legacy = await legacyWith({ blue: 2 ** 43 });
    expect(await hasRoomForSpeculativeCopy(tmpdir(), legacy, ['blue'], log)).toBe(false);
  });

  it('ignores a listed file that is absent, and refuses when the parent cannot be measured', async () => {
    const legacy = await legacyWith({ blue: 1024 });
    expect(await hasRoomForSpeculativeCopy(tmpdir(), legacy, ['blue', 'missing'], log)).toBe(true);
    // A file where a directory should be: ENOTDIR, neither measured nor absent.
    const blocked = path.join(legacy, 'blue', 'parent');
    expect(await hasRoomForSpeculativeCopy(blocked, legacy, ['blue'], log)).toBe(false);
  });

  it('measures a parent the move has yet to create on the directory it will be created in', async () => {
    const legacy = await legacyWith({ blue: 1024 });
    const unborn = path.join(legacy, 'not', 'yet');
    expect(await hasRoomForSpeculativeCopy(unborn, legacy, ['blue'], log)).toBe(true);
  });
});
