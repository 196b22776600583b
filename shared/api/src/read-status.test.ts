import { linkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from './client.js';
import { readDaemonStatus } from './read-status.js';
import { statusAnswer } from './test-fixtures.js';

let tmp: string;
let socketPath: string;
let server: http.Server | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'read-status-'));
  socketPath = path.join(tmp, 'agent.sock');
});
afterEach(async () => {
  const running = server;
  server = undefined;
  if (running !== undefined) {
    running.closeAllConnections();
    await new Promise((resolve) => running.close(resolve));
  }
  await rm(tmp, { recursive: true, force: true });
});

async function answerWith(status: number, contentType: string, body: string): Promise<void> {
  const requests: string[] = [];
  server = http.createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(status, { 'content-type': contentType });
    response.end(body);
  });
  await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
}

// What an operator sees of an error: the code (and so the exit code), the message, the hint.
async function failureOf(read: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await read;
  } catch (error) {
    const { code, message, hint } = error as { code: unknown; message: unknown; hint: unknown };
    return { code, message, hint };
  }
  throw new Error('the read succeeded');
}

const timeoutMs = 2_000;
const lean = () => readDaemonStatus({ socketPath, timeoutMs });
const typed = () => createApiClient({ socketPath, timeoutMs }).status();

describe('readDaemonStatus', () => {
  it('returns the daemon answer', async () => {
    await answerWith(200, 'application/json', JSON.stringify(statusAnswer()));
    await expect(lean()).resolves.toEqual(statusAnswer());
  });

  it('fails as the typed client does when the socket does not exist', async () => {
    const failure = await failureOf(lean());
    expect(failure).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: `the daemon did not answer on ${socketPath}: the socket does not exist`,
      hint: expect.stringContaining('systemctl status aks-flex-node-agent') as unknown,
    });
    expect(failure).toEqual(await failureOf(typed()));
  });

  it('fails as the typed client does when nothing listens on the socket', async () => {
    // A second name for the socket outlives the server, which removes its own on close.
    await answerWith(200, 'application/json', '{}');
    const stale = path.join(tmp, 'stale.sock');
    linkSync(socketPath, stale);
    const running = server;
    server = undefined;
    await new Promise((resolve) => running?.close(resolve));
    socketPath = stale;
    const failure = await failureOf(lean());
    expect(failure).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: `the daemon did not answer on ${stale}: nothing listens on it`,
    });
    expect(failure).toEqual(await failureOf(typed()));
  });

  it('fails as the typed client does when the daemon never answers', async () => {
    server = http.createServer(() => undefined);
    await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
    const quick = { socketPath, timeoutMs: 100 };
    const failure = await failureOf(readDaemonStatus(quick));
    expect(failure).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: `the daemon did not answer on ${socketPath}: no answer within 100 ms`,
    });
    expect(failure).toEqual(await failureOf(createApiClient(quick).status()));
  });

  it('raises the error of a problem answer as the typed client does', async () => {
    const problem = {
      type: 'urn:aks-flex-node:error:DAEMON_NOT_READY',
      title: 'DAEMON_NOT_READY',
      status: 503,
      detail: 'the daemon is starting',
      code: 'DAEMON_NOT_READY',
      hint: 'run `aks-flex-node status` again in a few seconds',
    };
    await answerWith(503, 'application/problem+json', JSON.stringify(problem));
    const failure = await failureOf(lean());
    expect(failure).toEqual({
      code: 'DAEMON_NOT_READY',
      message: 'the daemon is starting',
      hint: problem.hint,
    });
    expect(failure).toEqual(await failureOf(typed()));
  });

  it.each([
    ['an error status without a problem body', 500, 'application/json', '{"oops":1}'],
    ['an answer that is not JSON', 200, 'text/plain', 'hello'],
  ])('fails as the typed client does on %s', async (_name, status, contentType, body) => {
    await answerWith(status, contentType, body);
    const failure = await failureOf(lean());
    expect(failure).toMatchObject({ code: 'DAEMON_ERROR' });
    expect(failure).toEqual(await failureOf(typed()));
  });

  it('fails naming the field when the answer does not match the schema', async () => {
    const answer = { ...statusAnswer(), activationInProgress: 'no' };
    await answerWith(200, 'application/json', JSON.stringify(answer));
    await expect(lean()).rejects.toMatchObject({
      code: 'DAEMON_ERROR',
      message:
        "the daemon's answer to GET /v1/status does not match this release's schema: activationInProgress: must be boolean",
    });
  });
});
