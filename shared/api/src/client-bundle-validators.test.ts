import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answerValidatorsSource, evaluateAnswerValidators } from './answer-validators-source.js';
import { closeTestServer, statusAnswer } from './test-fixtures.js';

// A hot role's bundle holds only the validators of its answers
// (scripts/build.mjs, answersOfBundle); this stands in for the status bundle's.
vi.mock('./answer-validators.js', () => {
  const generated = evaluateAnswerValidators(answerValidatorsSource(['status', 'problem']));
  return { answerValidators: () => generated };
});

let tmp: string;
let server: http.Server | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'api-client-bundle-'));
});
afterEach(async () => {
  const running = server;
  server = undefined;
  await closeTestServer(running);
  await rm(tmp, { recursive: true, force: true });
});

async function serve(body: unknown): Promise<string> {
  const socketPath = path.join(tmp, 'agent.sock');
  server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
  return socketPath;
}

describe('the daemon client in a bundle with some of the validators', () => {
  it('checks the answers the bundle holds a validator for', async () => {
    const { createApiClient } = await import('./client.js');
    const socketPath = await serve(statusAnswer());
    await expect(createApiClient({ socketPath }).status()).resolves.toEqual(statusAnswer());
  });

  it('refuses another answer with INTERNAL naming it, not a TypeError', async () => {
    const { createApiClient } = await import('./client.js');
    const socketPath = await serve({});
    await expect(createApiClient({ socketPath }).hostRoot()).rejects.toMatchObject({
      code: 'INTERNAL',
      message: "this command's bundle holds no validator for the daemon's hostRoot answer",
      hint: "add hostRoot to the bundle's answers in scripts/build.mjs (answersOfBundle) and rebuild",
    });
  });
});
