import { linkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from './client.js';
import { apiRoutes, routePath } from './routes.js';
import { closeTestServer, statusAnswer } from './test-fixtures.js';

let tmp: string;
let socketPath: string;
let server: http.Server | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'api-client-'));
  socketPath = path.join(tmp, 'agent.sock');
});
afterEach(async () => {
  const running = server;
  server = undefined;
  await closeTestServer(running);
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
const readStatus = () => createApiClient({ socketPath, timeoutMs }).status();

describe('the daemon client', () => {
  it('returns the daemon answer', async () => {
    await answerWith(200, 'application/json', JSON.stringify(statusAnswer()));
    await expect(readStatus()).resolves.toEqual(statusAnswer());
  });

  it("makes a connection of its own per request, not through http's agent (whose server-name check costs the hook's start)", async () => {
    const connections: (string | undefined)[] = [];
    server = http.createServer((request, response) => {
      connections.push(request.headers.connection);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(statusAnswer()));
    });
    await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
    await readStatus();
    await readStatus();
    expect(connections).toEqual(['close', 'close']);
    expect(Object.keys(http.globalAgent.sockets)).toEqual([]);
    expect(Object.keys(http.globalAgent.freeSockets)).toEqual([]);
  });

  it('fails with DAEMON_UNREACHABLE when the socket does not exist', async () => {
    const failure = await failureOf(readStatus());
    expect(failure).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: `the daemon did not answer on ${socketPath}: the socket does not exist`,
      hint: expect.stringContaining('systemctl status aks-flex-node-agent') as unknown,
    });
  });

  it('fails with DAEMON_UNREACHABLE when nothing listens on the socket', async () => {
    // A second name for the socket outlives the server, which removes its own on close.
    await answerWith(200, 'application/json', '{}');
    const stale = path.join(tmp, 'stale.sock');
    linkSync(socketPath, stale);
    const running = server;
    server = undefined;
    await new Promise((resolve) => running?.close(resolve));
    socketPath = stale;
    const failure = await failureOf(readStatus());
    expect(failure).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: `the daemon did not answer on ${stale}: nothing listens on it`,
    });
  });

  it('fails with DAEMON_UNREACHABLE when the daemon never answers', async () => {
    server = http.createServer(() => undefined);
    await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
    const quick = { socketPath, timeoutMs: 100 };
    const failure = await failureOf(createApiClient(quick).status());
    expect(failure).toMatchObject({
      code: 'DAEMON_UNREACHABLE',
      message: `the daemon did not answer on ${socketPath}: no answer within 100 ms`,
    });
  });

  it('issue24#7 ends a request at once when its signal aborts, rejecting with the reason', async () => {
    const failing = new AbortController();
    const reason = new Error('the agent unit is failing');
    // Aborted once the request is in, which the daemon never answers: only
    // the signal can end it before the client's own minute.
    server = http.createServer(() => {
      failing.abort(reason);
    });
    await new Promise<void>((resolve) => server?.listen(socketPath, resolve));
    const request = createApiClient({
      socketPath,
      timeoutMs: 60_000,
      signal: failing.signal,
    }).status();
    await expect(request).rejects.toBe(reason);
  });

  it('raises the error of a problem answer', async () => {
    const problem = {
      type: 'urn:aks-flex-node:error:DAEMON_NOT_READY',
      title: 'DAEMON_NOT_READY',
      status: 503,
      detail: 'the daemon is starting',
      code: 'DAEMON_NOT_READY',
      hint: 'run `aks-flex-node status` again in a few seconds',
    };
    await answerWith(503, 'application/problem+json', JSON.stringify(problem));
    const failure = await failureOf(readStatus());
    expect(failure).toEqual({
      code: 'DAEMON_NOT_READY',
      message: 'the daemon is starting',
      hint: problem.hint,
    });
  });

  it.each([
    ['an error status without a problem body', 500, 'application/json', '{"oops":1}'],
    ['an answer that is not JSON', 200, 'text/plain', 'hello'],
  ])('fails with DAEMON_ERROR on %s', async (_name, status, contentType, body) => {
    await answerWith(status, contentType, body);
    const failure = await failureOf(readStatus());
    expect(failure).toMatchObject({ code: 'DAEMON_ERROR' });
  });

  it('fails naming the field when the answer does not match the schema', async () => {
    const answer = { ...statusAnswer(), activationInProgress: 'no' };
    await answerWith(200, 'application/json', JSON.stringify(answer));
    await expect(readStatus()).rejects.toMatchObject({
      code: 'DAEMON_ERROR',
      message:
        "the daemon's answer to GET /v1/status does not match this release's schema: activationInProgress: must be boolean",
    });
  });

  // Each route's answer is checked against its own schema, not just status's.
  const calls: [
    string,
    (client: ReturnType<typeof createApiClient>) => Promise<unknown>,
    string,
  ][] = [
    ['hostRoot', (client) => client.hostRoot(), routePath(apiRoutes.hostRoot)],
    ['migrateHostRoot', (client) => client.migrateHostRoot(), routePath(apiRoutes.migrateHostRoot)],
    [
      'beginAgentUpgrade',
      (client) => client.beginAgentUpgrade({ source: { binaryPath: '/a' } }),
      routePath(apiRoutes.beginAgentUpgrade),
    ],
    [
      'operation',
      (client) => client.operation('op-1'),
      routePath(apiRoutes.operation, { id: 'op-1' }),
    ],
    [
      'cancelOperation',
      (client) => client.cancelOperation('op-1'),
      routePath(apiRoutes.cancelOperation, { id: 'op-1' }),
    ],
    ['recover', (client) => client.recover(), routePath(apiRoutes.recover)],
    ['beginReset', (client) => client.beginReset(), routePath(apiRoutes.beginReset)],
    [
      'regenerateNspawnHooks',
      (client) => client.regenerateNspawnHooks('kube1'),
      routePath(apiRoutes.regenerateNspawnHooks, { machine: 'kube1' }),
    ],
  ];
  it.each(calls)('checks the answer of %s against its schema', async (_name, call, url) => {
    await answerWith(200, 'application/json', '{"unexpected":true}');
    await expect(call(createApiClient({ socketPath, timeoutMs }))).rejects.toMatchObject({
      code: 'DAEMON_ERROR',
      message: expect.stringContaining(`the daemon's answer to `) as unknown,
      path: expect.stringContaining(url) as unknown,
    });
  });

  it('passes on each event of an operation stream, and refuses a line outside the schema', async () => {
    const event = {
      seq: 1,
      state: 'running',
      phase: 'downloading',
      at: '2026-01-01T00:00:00.000Z',
    };
    const events: unknown[] = [];
    await answerWith(200, 'application/x-ndjson', `${JSON.stringify(event)}\n{"state":42}\n`);
    const client = createApiClient({ socketPath, timeoutMs });
    const followed = client.followOperation('op-1', (received) => events.push(received));
    await expect(followed).rejects.toMatchObject({
      code: 'DAEMON_ERROR',
      message: expect.stringContaining('GET /v1/operations/op-1/events') as unknown,
    });
    expect(events).toEqual([event]);
  });
});
