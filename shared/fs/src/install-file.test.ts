import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { installFile } from './install-file.js';
import { makeTempDir, permissions, withUmask } from './test-support.js';

describe('installFile', () => {
  it('hostroot#78 creates missing parents and writes the content with mode 0755', async () => {
    const tmp = await makeTempDir();
    const source = path.join(tmp, 'source');
    const target = path.join(tmp, 'root/lib/aks-flex-node/aks-flex-node-blue');
    await writeFile(source, 'blue');
    await installFile(source, target, { mode: 0o755 });
    expect(await readFile(target, 'utf8')).toBe('blue');
    expect(permissions((await stat(target)).mode)).toBe(0o755);
    expect(permissions((await stat(path.join(tmp, 'root/lib'))).mode)).toBe(0o755);
  });

  it('hostroot#78 a failed install (missing source) leaves the previous target intact', async () => {
    const tmp = await makeTempDir();
    const target = path.join(tmp, 'target');
    await writeFile(target, 'previous', { mode: 0o755 });
    const missing = path.join(tmp, 'missing');
    await expect(installFile(missing, target, { mode: 0o755 })).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: missing,
      message: expect.stringContaining(
        `read ${missing} to install it as ${target}: ENOENT`,
      ) as unknown,
    });
    expect(await readFile(target, 'utf8')).toBe('previous');
    expect(await readdir(tmp)).toEqual(['target']);
  });

  it('copies content larger than one read chunk unchanged', async () => {
    const tmp = await makeTempDir();
    const content = Buffer.alloc(3 * (1 << 20) + 17, 7);
    content[content.length - 1] = 9;
    await writeFile(path.join(tmp, 'big'), content);
    await installFile(path.join(tmp, 'big'), path.join(tmp, 'copy'), { mode: 0o700 });
    expect((await readFile(path.join(tmp, 'copy'))).equals(content)).toBe(true);
  });

  it('keeps the exact mode under umask 077 (decision for hostroot#92)', async () => {
    const tmp = await makeTempDir();
    await writeFile(path.join(tmp, 'source'), 'x');
    await withUmask(0o077, () =>
      installFile(path.join(tmp, 'source'), path.join(tmp, 'out'), { mode: 0o755 }),
    );
    expect(permissions((await stat(path.join(tmp, 'out'))).mode)).toBe(0o755);
  });
});
