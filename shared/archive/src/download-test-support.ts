import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import type { ErrorCode } from '@aks-flex-node/log';
import { expect } from 'vitest';
import { makeTarGz } from './archive-corpus.js';

/** A credential in every test URL's query; no error may ever show it. */
export const secret = 'SECRET-TOKEN';

/** The query of a signed download URL, carrying {@link secret}. */
export const signedQuery = `?sv=2024&sig=${secret}`;

/** A small valid release archive, and its SHA-256. */
export const releaseArchive = makeTarGz([{ name: 'aks-flex-node-linux-amd64', body: 'binary' }]);
export const releaseDigest = createHash('sha256').update(releaseArchive).digest('hex');

/** What a failed download must show: its code and words of its message. */
export interface ExpectedFailure {
  code: ErrorCode;
  words: string;
}

/**
 * Asserts what every failed download leaves behind: the expected error, no
 * {@link secret} anywhere in it (causes included), and an empty temp dir.
 */
export async function expectCleanFailure(
  download: Promise<unknown>,
  tempDir: string,
  expected: ExpectedFailure,
): Promise<void> {
  const error: unknown = await download.then(
    () => expect.fail('the download succeeded'),
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({
    code: expected.code,
    message: expect.stringContaining(expected.words) as unknown,
  });
  expect(inspect(error, { depth: 5 })).not.toContain(secret);
  expect(await readdir(tempDir)).toEqual([]);
}

/** `http://127.0.0.1:<port>` for a port that was free a moment ago and has nothing listening. */
export async function findClosedOrigin(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}`;
}
