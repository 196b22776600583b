import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isRegularExecutable } from './is-regular-executable.js';

async function tempDir(): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'is-regular-executable-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  return tmp;
}

describe('isRegularExecutable', () => {
  it('a file with an execute bit, or a link to one, is; a plain file, a directory or nothing is not', async () => {
    const tmp = await tempDir();
    const at = (name: string) => path.join(tmp, name);
    await writeFile(at('tool'), '#!/bin/sh\n', { mode: 0o700 });
    await chmod(at('tool'), 0o100);
    await writeFile(at('data'), 'x', { mode: 0o644 });
    await mkdir(at('dir'), { mode: 0o755 });
    await symlink(at('tool'), at('link'));
    expect(await isRegularExecutable(at('tool'))).toBe(true);
    expect(await isRegularExecutable(at('link'))).toBe(true);
    expect(await isRegularExecutable(at('data'))).toBe(false);
    expect(await isRegularExecutable(at('dir'))).toBe(false);
    expect(await isRegularExecutable(at('missing'))).toBe(false);
    // Under a file: ENOTDIR, as absent as a missing parent.
    expect(await isRegularExecutable(at('data/below'))).toBe(false);
  });

  it('a path that cannot be judged (a loop of links) is an error that names it', async () => {
    const tmp = await tempDir();
    await symlink(path.join(tmp, 'b'), path.join(tmp, 'a'));
    await symlink(path.join(tmp, 'a'), path.join(tmp, 'b'));
    const attempt = isRegularExecutable(path.join(tmp, 'a'));
    await expect(attempt).rejects.toThrow(`inspect ${path.join(tmp, 'a')}`);
    await expect(attempt).rejects.toMatchObject({ code: 'HOST_ROOT_IO' });
  });
});
