import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errnoCode } from '@aks-flex-node/log';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256InWorkers } from './hash-in-workers.js';

const sha256 = (content: Buffer | string): string =>
  createHash('sha256').update(content).digest('hex');

const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function scratch(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hash-in-workers-'));
  made.push(dir);
  return dir;
}

describe('sha256InWorkers', () => {
  it('gives each file the SHA-256 of its content, a file named twice hashed once', async () => {
    const tmp = await scratch();
    // Larger than one 1 MiB read, and not a multiple of it.
    const big = Buffer.alloc((3 << 20) + 17, 7);
    await writeFile(path.join(tmp, 'big'), big);
    await writeFile(path.join(tmp, 'empty'), '');
    const files = [path.join(tmp, 'big'), path.join(tmp, 'empty'), path.join(tmp, 'big')];
    const got = await sha256InWorkers(files);
    expect([...got.entries()]).toEqual([
      [path.join(tmp, 'big'), sha256(big)],
      [path.join(tmp, 'empty'), sha256('')],
    ]);
  });

  it('rejects a missing file with HOST_ROOT_IO naming it, ENOENT as the cause', async () => {
    const tmp = await scratch();
    const missing = path.join(tmp, 'missing');
    const error: unknown = await sha256InWorkers([missing]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'HOST_ROOT_IO', path: missing });
    expect(errnoCode((error as Error).cause)).toBe('ENOENT');
  });
});
