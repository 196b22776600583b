import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { fileSha256 } from './file-sha256.js';
import { makeTempDir } from './test-support.js';

describe('fileSha256', () => {
  it('hostroot#82 equals the SHA-256 of the content', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'file'), 'aks-flex-node');
    const expected = createHash('sha256').update('aks-flex-node').digest('hex');
    expect(await fileSha256(path.join(tmp, 'file'))).toBe(expected);
  });

  it('hashes a file of several blocks and a partial last one as one content', async () => {
    const tmp = await makeTempDir();
    // 2.5 MiB whose bytes differ block to block, so a block read twice,
    // skipped or cut short changes the digest.
    const content = Buffer.alloc(5 * 512 * 1024);
    for (let i = 0; i < content.length; i += 4) content.writeUInt32LE(i, i);
    await writeFile(path.join(tmp, 'file'), content);
    const expected = createHash('sha256').update(content).digest('hex');
    expect(await fileSha256(path.join(tmp, 'file'))).toBe(expected);
  });

  it('hostroot#82 a missing file gives a not-exist error naming it', async () => {
    const tmp = await makeTempDir();
    const missing = path.join(tmp, 'missing');
    const error: unknown = await fileSha256(missing).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'HOST_ROOT_IO', path: missing });
    expect(errnoCode((error as Error).cause)).toBe('ENOENT');
  });
});
