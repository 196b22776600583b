import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sameBytes } from './same-bytes.js';

describe('sameBytes', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'same-bytes-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  // Over two chunks, so a difference in the first, the middle or the last byte is found.
  const size = (1 << 20) * 2 + 17;
  const write = async (name: string, flip?: number): Promise<string> => {
    const bytes = Buffer.alloc(size, 7);
    if (flip !== undefined) bytes[flip] = 8;
    const file = path.join(tmp, name);
    await writeFile(file, bytes);
    return file;
  };

  it('equal files are the same', async () => {
    expect(await sameBytes(await write('a'), await write('b'), size)).toBe(true);
  });

  it.each([0, 1 << 20, size - 1])('a difference at byte %i is found', async (at) => {
    expect(await sameBytes(await write('a'), await write('b', at), size)).toBe(false);
  });

  it('a file shorter than the size given is not the same', async () => {
    const short = path.join(tmp, 'short');
    await writeFile(short, Buffer.alloc(size - 1, 7));
    expect(await sameBytes(await write('a'), short, size)).toBe(false);
  });
});
