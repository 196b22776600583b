import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { downloadArchive } from './download-archive.js';
import type { DownloadArchiveOptions } from './download-options.js';
import {
  expectCleanFailure,
  releaseArchive,
  releaseDigest,
  secret,
  signedQuery,
  type ExpectedFailure,
} from './download-test-support.js';
import { makeTempDir } from './test-support.js';
import { redirectTo, sendBody, serveRoutes, stall, type Route } from './test-server.js';
import { parseArchiveSource } from './archive-source.js';

/** A redirect chain /r0 → /r1 → … → /archive of `hops` redirects, each hop carrying the query. */
function redirectChain(hops: number): Record<string, Route> {
  const routes: Record<string, Route> = { '/archive': sendBody(releaseArchive) };
  for (let i = 0; i < hops; i++) {
    const next = i + 1 === hops ? '/archive' : `/r${i + 1}`;
    routes[`/r${i}`] = redirectTo(`${next}${signedQuery}`);
  }
  return routes;
}

/** Redirects to the same server with user-info, which only the request's Host can name. */
const redirectWithUserInfo: Route = (request, response) => {
  const host = request.headers.host ?? '127.0.0.1';
  redirectTo(`http://user:${secret}@${host}/x${signedQuery}`)(request, response);
};

interface RefusalRow {
  name: string;
  routes: Record<string, Route>;
  /** The first path requested; `/archive` unless said. */
  start?: string;
  options?: Partial<DownloadArchiveOptions>;
  expected: (origin: string) => ExpectedFailure;
}

const refusals: RefusalRow[] = [
  {
    name: 'a 404 fails with the redacted URL and the status',
    routes: {},
    expected: (origin) => ({
      code: 'FETCH_FAILED',
      words: `download ${origin}/archive: HTTP 404 Not Found`,
    }),
  },
  {
    name: 'a 500 fails with the status',
    routes: { '/archive': (_request, response) => response.writeHead(500).end() },
    expected: () => ({ code: 'FETCH_FAILED', words: 'HTTP 500 Internal Server Error' }),
  },
  {
    name: 'a redirect without a Location fails with its status',
    routes: { '/archive': (_request, response) => response.writeHead(302).end() },
    expected: () => ({ code: 'FETCH_FAILED', words: 'HTTP 302 Found' }),
  },
  {
    name: 'a chain of 11 redirects is refused',
    routes: redirectChain(11),
    start: '/r0',
    expected: (origin) => ({
      code: 'UPGRADE_REFUSED',
      words: `stopped after 10 redirects from ${origin}/r0`,
    }),
  },
  {
    name: 'a redirect to a URL with user-info is refused',
    routes: { '/archive': redirectWithUserInfo },
    expected: () => ({ code: 'UPGRADE_REFUSED', words: 'the URL carries user-info' }),
  },
  {
    name: 'a redirect to ftp is refused',
    routes: { '/archive': redirectTo(`ftp://127.0.0.1/archive${signedQuery}`) },
    expected: () => ({
      code: 'UPGRADE_REFUSED',
      words: 'unsupported agent download URL scheme ftp',
    }),
  },
  {
    name: 'a redirect to a URL with a fragment is refused',
    routes: { '/archive': redirectTo(`/x${signedQuery}#${secret}`) },
    expected: () => ({ code: 'UPGRADE_REFUSED', words: 'the URL has a fragment' }),
  },
  {
    name: 'agentbinary#122 a Content-Length over the limit is refused before the body is read',
    // The body never comes: reading it would wait until the timeout.
    routes: { '/archive': stall({ 'content-length': '2000' }) },
    options: { maxBytes: 1000 },
    expected: () => ({
      code: 'UPGRADE_REFUSED',
      words: 'is 2000 bytes, over the limit of 1000 bytes',
    }),
  },
  {
    name: 'agentbinary#122 a body over the limit without a Content-Length is refused',
    routes: { '/archive': sendBody(Buffer.alloc(5000), { contentLength: false }) },
    options: { maxBytes: 1000 },
    expected: () => ({ code: 'UPGRADE_REFUSED', words: 'larger than the limit of 1000 bytes' }),
  },
  {
    name: 'issue12#5 a gzip Content-Encoding is refused, not decoded',
    routes: { '/archive': sendEncoded(gzipSync(releaseArchive), 'gzip') },
    expected: (origin) => ({
      code: 'UPGRADE_REFUSED',
      words: `the server sent ${origin}/archive with Content-Encoding gzip; only identity is accepted`,
    }),
  },
  {
    name: 'issue12#5 a br Content-Encoding, listed after identity, is refused',
    routes: { '/archive': sendEncoded(releaseArchive, 'identity, br') },
    expected: () => ({ code: 'UPGRADE_REFUSED', words: 'Content-Encoding br' }),
  },
  {
    name: 'issue12#4 a server that sends headers and then nothing fails as stalled, long before the timeout',
    routes: { '/archive': stall({ 'content-length': '2000' }) },
    options: { stallTimeoutMs: 300, timeoutMs: 60_000 },
    expected: (origin) => ({
      code: 'FETCH_FAILED',
      words: `download ${origin}/archive stalled: no bytes arrived for 300 ms`,
    }),
  },
  {
    name: 'issue12#4 a server that accepts and never answers fails as stalled',
    routes: { '/archive': () => undefined },
    options: { stallTimeoutMs: 300, timeoutMs: 60_000 },
    expected: () => ({ code: 'FETCH_FAILED', words: 'stalled: no bytes arrived for 300 ms' }),
  },
  {
    name: 'issue12#4 a server that stops half-way fails as stalled',
    routes: {
      '/archive': (_request, response) => {
        response.writeHead(200, { 'content-length': String(releaseArchive.length) });
        response.write(releaseArchive.subarray(0, 10));
      },
    },
    options: { stallTimeoutMs: 300, timeoutMs: 60_000 },
    expected: () => ({ code: 'FETCH_FAILED', words: 'stalled: no bytes arrived for 300 ms' }),
  },
];

/** A route that answers 200 with `body` and the Content-Encoding `encoding`. */
function sendEncoded(body: Buffer, encoding: string): Route {
  return (_request, response) => {
    response.writeHead(200, {
      'content-type': 'application/gzip',
      'content-encoding': encoding,
      'content-length': body.length,
    });
    response.end(body);
  };
}

describe('downloadArchive over http', () => {
  it.each(refusals)('$name, and leaves no temp file', async (row) => {
    const server = await serveRoutes(row.routes);
    const tempDir = await makeTempDir();
    const url = `${server.origin}${row.start ?? '/archive'}${signedQuery}`;
    const download = downloadArchive(parseArchiveSource({ url }), {
      tempDir,
      timeoutMs: 5000,
      ...row.options,
    });
    await expectCleanFailure(download, tempDir, row.expected(server.origin));
  });

  it('issue12#4 a slow server that keeps sending is not a stall', async () => {
    const server = await serveRoutes({
      '/archive': (_request, response) => {
        response.writeHead(200, { 'content-length': String(releaseArchive.length) });
        let sent = 0;
        const timer = setInterval(() => {
          response.write(releaseArchive.subarray(sent, sent + 8));
          sent += 8;
          if (sent >= releaseArchive.length) {
            clearInterval(timer);
            response.end();
          }
        }, 50);
      },
    });
    const tempDir = await makeTempDir();
    const result = await downloadArchive(parseArchiveSource({ url: `${server.origin}/archive` }), {
      tempDir,
      stallTimeoutMs: 300,
    });
    expect(result.sha256).toBe(releaseDigest);
  });

  it.each([
    ['agentbinary#5 no digest', undefined],
    ['the digest', releaseDigest],
  ])('a chain of 10 redirects is followed, with %s', async (_name, sha256) => {
    const server = await serveRoutes(redirectChain(10));
    const tempDir = await makeTempDir();
    const source = parseArchiveSource({ url: `${server.origin}/r0${signedQuery}`, sha256 });
    const result = await downloadArchive(source, { tempDir });
    expect(result.sha256).toBe(releaseDigest);
    expect(server.requests).toHaveLength(11);
  });

  it.each([301, 302, 303, 307, 308])(
    'a %i redirect to a relative location is followed',
    async (status) => {
      const server = await serveRoutes({
        '/old': redirectTo(`archive${signedQuery}`, status),
        '/archive': sendBody(releaseArchive),
      });
      const tempDir = await makeTempDir();
      const result = await downloadArchive(parseArchiveSource({ url: `${server.origin}/old` }), {
        tempDir,
      });
      expect(result.bytes).toBe(releaseArchive.length);
      expect(server.requests).toEqual(['/old', '/archive']);
    },
  );
});
