import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net, { type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { problemSchema } from '@aks-flex-node/api';
import { createSilentLogger, type ErrorCode } from '@aks-flex-node/log';
import { buildApp } from './app.js';
import { answerClientError } from './client-error.js';
import { createOperationRegistry } from './upgrade/operation-registry.js';

/** What the hostile requests may change: nothing, so every call is counted. */
interface Effects {
  migrations: number;
  upgrades: number;
  cancels: number;
}

let tmp: string;
let app: FastifyInstance;
let effects: Effects;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'hostile-'));
  effects = { migrations: 0, upgrades: 0, cancels: 0 };
  const refuse = () => Promise.reject(new Error('not reached by a refused request'));
  app = await buildApp({
    log: createSilentLogger(),
    version: { version: '1.2.3', commit: 'abc', arch: 'x64', node: '24', capabilities: [] },
    hostRoot: {
      describe: refuse,
      migrate: () => {
        effects.migrations += 1;
        return refuse();
      },
    },
    upgrades: {
      begin: () => {
        effects.upgrades += 1;
        return refuse();
      },
      get: () => Promise.resolve(undefined),
      cancel: () => {
        effects.cancels += 1;
        return refuse();
      },
      judgeAtStart: refuse,
      recover: refuse,
      keepMachineCopy: () => undefined,
      machineCopyView: () => undefined,
      drain: () => Promise.resolve(),
    },
    reset: { begin: refuse, drain: () => Promise.resolve() },
    nspawnHooks: { regenerate: refuse, unchanged: refuse },
    startup: {
      refusal: () => undefined,
      view: () => {
        throw new Error('not used by this test');
      },
    },
    operations: createOperationRegistry(),
    runMutation: (_purpose, work) => work(),
    hostView: {
      read: () => {
        throw new Error('status is not read by these tests');
      },
    },
    daemon: { pid: 1, startedAt: 1, executable: '/x', socket: 'self-bound', socketPath: '/x' },
    now: () => 1,
  });
});

afterEach(async () => {
  await app.close();
  await rm(tmp, { recursive: true, force: true });
});

interface HostileRequest {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body?: string;
  status: number;
  code: ErrorCode;
  detail: RegExp;
}

// The corpus the adversarial pass used, one row per input; issue12#6 rows failed before.
const corpus: HostileRequest[] = [
  {
    name: 'issue12#6 a malformed percent-escape in an id',
    method: 'GET',
    url: '/v1/operations/%zz',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /request URL is not valid/,
  },
  {
    name: 'issue12#6 an over-long id',
    method: 'GET',
    url: `/v1/operations/${'a'.repeat(5000)}`,
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /too long/,
  },
  {
    name: 'issue12#6 an id with traversal',
    method: 'GET',
    url: '/v1/operations/..%2F..%2Fetc%2Fpasswd',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /operation id is 1 to 128/,
  },
  {
    name: 'issue12#6 an id with a NUL',
    method: 'GET',
    url: '/v1/operations/a%00b',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /operation id/,
  },
  {
    name: 'issue12#4 a cancel of an id no operation can have',
    method: 'DELETE',
    url: '/v1/operations/.hidden',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /operation id/,
  },
  {
    name: 'issue12#6 a null body on migrate',
    method: 'POST',
    url: '/v1/host-root/migrate',
    body: 'null',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /expected object/,
  },
  {
    // fastify's own JSON parser refuses prototype poisoning (onProtoPoisoning: 'error').
    name: 'issue12#6 a __proto__ key',
    method: 'POST',
    url: '/v1/host-root/migrate',
    body: '{"__proto__":{"admin":true}}',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /not valid JSON/,
  },
  {
    name: 'issue12#6 a nested constructor key',
    method: 'POST',
    url: '/v1/agent-upgrades',
    body: '{"source":{"url":"https://x/a.tar.gz","constructor":{"prototype":{}}}}',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /not valid JSON/,
  },
  {
    name: 'issue12#6 a binaryPath with a NUL',
    method: 'POST',
    url: '/v1/agent-upgrades',
    body: '{"source":{"binaryPath":"/var/tmp/a\\u0000b"}}',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /NUL byte/,
  },
  {
    name: 'issue12#6 a relative binaryPath',
    method: 'POST',
    url: '/v1/agent-upgrades',
    body: '{"source":{"binaryPath":"aks-flex-node"}}',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /absolute path/,
  },
  {
    name: 'malformed JSON',
    method: 'POST',
    url: '/v1/host-root/migrate',
    body: '{"a":',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /not valid JSON/,
  },
  {
    name: 'an empty JSON body',
    method: 'POST',
    url: '/v1/host-root/migrate',
    body: '',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /cannot be empty/,
  },
  {
    name: 'a JSON array',
    method: 'POST',
    url: '/v1/agent-upgrades',
    body: '[]',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /not valid/,
  },
  {
    // JSON.parse does not recurse; the strict schema refuses the first unknown key.
    name: 'a deeply nested body',
    method: 'POST',
    url: '/v1/agent-upgrades',
    body: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /Unrecognized key/,
  },
  {
    name: 'both sources at once',
    method: 'POST',
    url: '/v1/agent-upgrades',
    body: '{"source":{"url":"https://x/a.tar.gz","binaryPath":"/a"}}',
    status: 400,
    code: 'INVALID_ARGUMENT',
    detail: /exactly one of url/,
  },
  {
    name: 'an unknown route',
    method: 'GET',
    url: '/v1/../../etc/passwd',
    status: 404,
    code: 'NOT_FOUND',
    detail: /no route/,
  },
];

describe('hostile requests are refused at the door with problem+json and change nothing', () => {
  it.each(corpus)('$name: $status $code', async (row) => {
    const response = await app.inject({
      method: row.method,
      url: row.url,
      ...(row.body === undefined
        ? {}
        : { payload: row.body, headers: { 'content-type': 'application/json' } }),
    });
    expect(response.statusCode, response.body).toBe(row.status);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = problemSchema.parse(response.json());
    expect(problem.code).toBe(row.code);
    expect(problem.detail).toMatch(row.detail);
    expect(effects).toEqual({ migrations: 0, upgrades: 0, cancels: 0 });
  });

  it('issue12#6 headers over the limit answer 431 problem+json over a real socket', async () => {
    const socketPath = path.join(tmp, 'api.sock');
    await app.listen({ path: socketPath });
    const client = net.connect(socketPath);
    await once(client, 'connect');
    client.write(
      `GET /v1/status HTTP/1.1\r\nHost: agent\r\nX-Pad: ${'x'.repeat(64 * 1024)}\r\n\r\n`,
    );
    const chunks: Buffer[] = [];
    client.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(client, 'close');
    const answer = Buffer.concat(chunks).toString();
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toContain('application/problem+json');
    const body = problemSchema.parse(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
    expect(body.code).toBe('REQUEST_HEADERS_TOO_LARGE');
    expect(effects).toEqual({ migrations: 0, upgrades: 0, cancels: 0 });
  });

  it.each([
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'REQUEST_TIMEOUT'],
    ['ERR_HTTP_HEADERS_TIMEOUT', 408, 'REQUEST_TIMEOUT'],
    ['HPE_INVALID_METHOD', 400, 'INVALID_ARGUMENT'],
  ])('issue12#6 a client error %s answers %i %s', (errorCode, status, code) => {
    let written = '';
    const socket = {
      writable: true,
      end: (text: string) => (written = text),
      destroy: () => undefined,
    } as unknown as Socket;
    answerClientError(
      Object.assign(new Error('refused'), { code: errorCode }),
      socket,
      createSilentLogger(),
    );
    expect(written).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(written).toContain(`"code":"${code}"`);
  });
});
