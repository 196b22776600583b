import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { exists } from './exists.js';

async function tempDir(): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'exists-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  return tmp;
}

describe('exists', () => {
  it('a file, and a dangling link, exist; a missing path does not', async () => {
    const tmp = await tempDir();
    await writeFile(path.join(tmp, 'file'), 'x');
    await symlink(path.join(tmp, 'nowhere'), path.join(tmp, 'dangling'));
    expect(await exists(path.join(tmp, 'file'))).toBe(true);
    expect(await exists(path.join(tmp, 'dangling'))).toBe(true);
    expect(await exists(path.join(tmp, 'missing'))).toBe(false);
  });

  it('a path that cannot be judged (a file in the way) is an error, not absent', async () => {
    const tmp = await tempDir();
    await writeFile(path.join(tmp, 'file'), 'x');
    const attempt = exists(path.join(tmp, 'file/below'));
    await expect(attempt).rejects.toThrow(`inspect ${path.join(tmp, 'file/below')}`);
    await expect(attempt).rejects.toMatchObject({ code: 'HOST_ROOT_IO' });
  });
});
