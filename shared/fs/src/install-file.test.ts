import { open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { installFile, installWriteBytes } from './install-file.js';
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

  it('writes the copy in pieces of 64 KiB at most, so the page cache holds it in small folios', async () => {
    const tmp = await makeTempDir();
    const content = Buffer.alloc(2 * (1 << 20) + 5, 3);
    await writeFile(path.join(tmp, 'big'), content);
    // FileHandle is not exported; its prototype is reached through a handle.
    const probe = await open(path.join(tmp, 'big'), 'r');
    const fileHandlePrototype = Object.getPrototypeOf(probe) as {
      write: (...args: unknown[]) => unknown;
    };
    await probe.close();
    const write = vi.spyOn(fileHandlePrototype, 'write');
    try {
      await installFile(path.join(tmp, 'big'), path.join(tmp, 'copy'), { mode: 0o755 });
      const lengths = write.mock.calls.map((call) => call[2] as number);
      expect(installWriteBytes).toBe(64 * 1024);
      expect(lengths.length).toBeGreaterThanOrEqual(Math.ceil(content.length / installWriteBytes));
      expect(Math.max(...lengths)).toBeLessThanOrEqual(installWriteBytes);
    } finally {
      write.mockRestore();
    }
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
