import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { downloadArchive } from './download-archive.js';
import {
  expectCleanFailure,
  findClosedOrigin,
  releaseArchive,
  releaseDigest,
  signedQuery,
} from './download-test-support.js';
import { makeTempDir, permissions } from './test-support.js';
import { sendBody, serveRoutes, stall } from './test-server.js';
import type { DownloadProgress } from './throttle-progress.js';
import { parseArchiveSource } from './archive-source.js';

describe('downloadArchive', () => {
  it('agentbinary#116 a 200 with the right digest lands as a 0600 temp archive with its hash', async () => {
    const server = await serveRoutes({ '/archive': sendBody(releaseArchive) });
    const tempDir = await makeTempDir();
    const url = `${server.origin}/archive${signedQuery}`;
    const source = parseArchiveSource({ url, sha256: `sha256:${releaseDigest.toUpperCase()}` });
    const result = await downloadArchive(source, { tempDir });
    expect(result).toEqual({
      path: result.path,
      sha256: releaseDigest,
      bytes: releaseArchive.length,
    });
    expect(path.dirname(result.path)).toBe(tempDir);
    expect(path.basename(result.path)).toMatch(/^agent-upgrade-[0-9a-f]+\.tar\.gz$/);
    expect((await readFile(result.path)).equals(releaseArchive)).toBe(true);
    expect(permissions((await stat(result.path)).mode)).toBe(0o600);
  });

  it('agentbinary#120 a wrong SHA-256 is refused with both digests shown, and leaves no temp file', async () => {
    const server = await serveRoutes({ '/archive': sendBody(releaseArchive) });
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({
      url: `${server.origin}/archive${signedQuery}`,
      sha256: 'ab'.repeat(32),
    });
    await expectCleanFailure(downloadArchive(source, { tempDir }), tempDir, {
      code: 'UPGRADE_REFUSED',
      words: `has SHA-256 ${releaseDigest.slice(0, 12)}…, expected abababababab…`,
    });
  });

  it('reports progress with the Content-Length, throttled, and a final call with every byte', async () => {
    const body = Buffer.alloc(3 << 20, 7);
    const server = await serveRoutes({ '/archive': sendBody(body) });
    const tempDir = await makeTempDir();
    const calls: DownloadProgress[] = [];
    // The throttle's clock stands still, so every chunk after the first is
    // within its interval: only the first and the final count are reported.
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      await downloadArchive(parseArchiveSource({ url: `${server.origin}/archive` }), {
        tempDir,
        onProgress: (progress) => calls.push(progress),
      });
    } finally {
      vi.useRealTimers();
    }
    expect(calls).toHaveLength(2);
    expect(calls[0]?.totalBytes).toBe(body.length);
    expect(calls[0]?.receivedBytes).toBeLessThan(body.length);
    expect(calls.at(-1)).toEqual({ receivedBytes: body.length, totalBytes: body.length });
  });

  it('reports progress without a total when the server sends no Content-Length', async () => {
    const server = await serveRoutes({
      '/archive': sendBody(releaseArchive, { contentLength: false }),
    });
    const tempDir = await makeTempDir();
    const calls: DownloadProgress[] = [];
    await downloadArchive(parseArchiveSource({ url: `${server.origin}/archive` }), {
      tempDir,
      onProgress: (progress) => calls.push(progress),
    });
    expect(calls.at(-1)).toEqual({ receivedBytes: releaseArchive.length });
  });

  it('a connection cut in the middle of the body fails, and leaves no temp file', async () => {
    const server = await serveRoutes({
      '/archive': (_request, response) => {
        response.writeHead(200, { 'content-length': '100000' });
        response.write(Buffer.alloc(1000), () => response.destroy());
      },
    });
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({ url: `${server.origin}/archive${signedQuery}` });
    await expectCleanFailure(downloadArchive(source, { tempDir }), tempDir, {
      code: 'FETCH_FAILED',
      words: `download ${server.origin}/archive: terminated`,
    });
  });

  it('a server that never sends the body times out, and leaves no temp file', async () => {
    const server = await serveRoutes({ '/archive': stall() });
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({ url: `${server.origin}/archive${signedQuery}` });
    await expectCleanFailure(downloadArchive(source, { tempDir, timeoutMs: 300 }), tempDir, {
      code: 'FETCH_FAILED',
      words: `download ${server.origin}/archive timed out after 300 ms`,
    });
  });

  it('a caller cancelling fails the download, and leaves no temp file', async () => {
    const controller = new AbortController();
    const headersOnly = stall({ 'content-length': '5000' });
    // Cancelled once the server has answered the headers and sends no more.
    const server = await serveRoutes({
      '/archive': (request, response) => {
        headersOnly(request, response);
        controller.abort();
      },
    });
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({ url: `${server.origin}/archive${signedQuery}` });
    await expectCleanFailure(
      downloadArchive(source, { tempDir, signal: controller.signal }),
      tempDir,
      {
        code: 'OPERATION_CANCELLED',
        words: `download ${server.origin}/archive was cancelled`,
      },
    );
  });

  it('a refused connection fails with the redacted URL and the socket error as cause', async () => {
    const origin = await findClosedOrigin();
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({ url: `${origin}/archive${signedQuery}` });
    await expectCleanFailure(downloadArchive(source, { tempDir }), tempDir, {
      code: 'FETCH_FAILED',
      words: `download ${origin}/archive: fetch failed: connect ECONNREFUSED`,
    });
  });

  it('a missing download directory fails naming it', async () => {
    const tempDir = path.join(await makeTempDir(), 'missing');
    const source = parseArchiveSource({ url: 'http://127.0.0.1:9/archive' });
    await expect(downloadArchive(source, { tempDir })).rejects.toMatchObject({
      code: 'FETCH_FAILED',
      message: expect.stringContaining(`create ${tempDir}/agent-upgrade-`) as unknown,
    });
  });

  it.each([
    ['a relative download directory', { tempDir: 'tmp' }],
    ['agentbinary#117 a negative size limit', { maxBytes: -1 }],
    ['a zero size limit', { maxBytes: 0 }],
    ['a fractional timeout', { timeoutMs: 1.5 }],
  ])('%s is an INVALID_ARGUMENT', async (_name, override) => {
    const source = parseArchiveSource({ url: 'http://127.0.0.1:9/archive' });
    await expect(downloadArchive(source, { tempDir: '/tmp', ...override })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
