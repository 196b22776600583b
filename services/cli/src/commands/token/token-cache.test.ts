import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  readCachedToken,
  refreshMarginMs,
  tokenCacheKey,
  writeCachedToken,
  type TokenCacheHost,
} from './token-cache.js';

let base: string;
let host: TokenCacheHost;
const now = Date.UTC(2026, 11, 3, 17);
const asRoot = process.geteuid?.() === 0;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'token-cache-'));
  host = { dir: path.join(base, 'run', 'token-cache'), euid: 0, now: () => now };
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe.skipIf(!asRoot)('the token cache (root only)', () => {
  it('issue23 a kept token is read back, and the directory is 0700, the file 0600', async () => {
    const key = tokenCacheKey({ mode: 'msi' });
    expect(
      writeCachedToken(host, key, { token: 't1', expiresOnTimestamp: now + 3_600_000 }),
    ).toBeUndefined();
    expect(readCachedToken(host, key)).toEqual({
      token: 't1',
      expiresOnTimestamp: now + 3_600_000,
    });
    expect((await stat(host.dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(host.dir, `${key}.json`))).mode & 0o777).toBe(0o600);
    expect(await readdir(host.dir)).toEqual([`${key}.json`]);
  });

  it.each([
    ['inside the refresh margin', refreshMarginMs, undefined],
    ['a second past the margin', refreshMarginMs + 1000, 't1'],
  ])('issue23 a token %s', (_case, left, expected) => {
    const key = tokenCacheKey({ mode: 'msi' });
    writeCachedToken(host, key, { token: 't1', expiresOnTimestamp: now + left });
    expect(readCachedToken(host, key)?.token).toBe(expected);
  });

  it('issue23 another user neither reads nor writes the cache', async () => {
    const key = tokenCacheKey({ mode: 'msi' });
    const user = { ...host, euid: 1000 };
    expect(
      writeCachedToken(user, key, { token: 't1', expiresOnTimestamp: now + 3_600_000 }),
    ).toBeUndefined();
    await expect(stat(host.dir)).rejects.toThrow('ENOENT');
    writeCachedToken(host, key, { token: 't1', expiresOnTimestamp: now + 3_600_000 });
    expect(readCachedToken(user, key)).toBeUndefined();
  });

  it('issue23 a torn or world-readable entry is a miss', async () => {
    const key = tokenCacheKey({ mode: 'msi' });
    writeCachedToken(host, key, { token: 't1', expiresOnTimestamp: now + 3_600_000 });
    const file = path.join(host.dir, `${key}.json`);
    await writeFile(file, '{"token":', { mode: 0o600 });
    expect(readCachedToken(host, key)).toBeUndefined();
    await writeFile(file, JSON.stringify({ token: 't1', expiresOnTimestamp: now + 3_600_000 }), {
      mode: 0o644,
    });
    await (await import('node:fs/promises')).chmod(file, 0o644);
    expect(readCachedToken(host, key)).toBeUndefined();
  });

  it('issue23 different credentials have different keys; the key names no setting', () => {
    const a = tokenCacheKey({ client: 'a', secret: 'x' });
    expect(a).not.toBe(tokenCacheKey({ client: 'b', secret: 'x' }));
    expect(a).toBe(tokenCacheKey({ secret: 'x', client: 'a' }));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});
