import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import {
  apiRoutes,
  problemSchema,
  requestBodyLimitBytes as bodyLimitBytes,
  routePath,
  statusResponseSchema,
  type HostRootResponse,
} from '@aks-flex-node/api';
import { createLogger, createSilentLogger, type Logger } from '@aks-flex-node/log';
import { buildApp } from './app.js';
import type { ResetService } from './reset/reset-service.js';
import type { SupervisorDeps } from './deps.js';
import { createHostView } from './host-view.js';
import { createMutationQueue } from './mutation-queue.js';
import { stopAccepting, watchConnections } from './socket/connection-drain.js';
import { createStartupGate, type StartupGate } from './startup/startup-gate.js';
import { hostPathsUnder } from '@aks-flex-node/layout';
import { describeOperation } from './upgrade/describe-operation.js';
import { createOperationRegistry } from './upgrade/operation-registry.js';
import type { UpgradeService } from './upgrade/upgrade-service.js';

const linked: HostRootResponse = {
  path: '/opt/unbounded/agent',
  resolved: '/usr/local',
  planned: '/usr/local',
  state: 'linked',
  legacyReleased: false,
};

interface Fake {
  migrations: number;
  release?: () => void;
  /** The host root as the filesystem would describe it now. */
  host: HostRootResponse;
  /** How many times the host root was described (read from the filesystem). */
  describes: number;
  /** The monotonic clock the status view ages by. */
  clock: number;
}

const moved: HostRootResponse = {
  path: '/opt/unbounded/agent',
  resolved: '/opt/unbounded/agent',
  planned: '/opt/unbounded/agent',
  state: 'installed',
  legacyReleased: true,
};

// These tests cover the host-root and status routes; upgrades have their own tests.
const unused = () => Promise.reject(new Error('not used by this test'));
const unusedUpgrades: UpgradeService = {
  begin: unused,
  get: unused,
  judgeAtStart: unused,
  recover: unused,
  cancel: unused,
  keepMachineCopy: () => undefined,
  machineCopyView: () => undefined,
  drain: () => Promise.resolve(),
};

const unusedReset: ResetService = { begin: unused, drain: () => Promise.resolve() };
function openGate(): StartupGate {
  const gate = createStartupGate();
  gate.open();
  return gate;
}

let tmp: string;
let app: FastifyInstance;
let fake: Fake;

async function build(
  options: {
    blockMigration?: boolean;
    upgrades?: UpgradeService;
    gate?: StartupGate;
    /** What the host root becomes when a migration runs. */
    migrateTo?: HostRootResponse;
    log?: Logger;
  } = {},
) {
  const gate = options.gate ?? openGate();
  const log = options.log ?? createSilentLogger();
  const queue = createMutationQueue({
    lockPath: path.join(tmp, 'run/activation.lock'),
    goLockPath: path.join(tmp, 'run/aks-flex-node-agent-upgrade.lock'),
    log,
  });
  const deps: SupervisorDeps = {
    log,
    version: {
      version: '1.2.3',
      commit: 'abc',
      arch: 'amd64',
      node: '24',
      capabilities: ['host-root'],
    },
    hostRoot: {
      describe: () => {
        fake.describes += 1;
        return Promise.resolve(fake.host);
      },
      migrate: async () => {
        fake.migrations += 1;
        if (options.blockMigration === true)
          await new Promise<void>((resolve) => (fake.release = resolve));
        if (options.migrateTo !== undefined) fake.host = options.migrateTo;
        return { before: 'absent', after: fake.host };
      },
    },
    nspawnHooks: { regenerate: unused, unchanged: unused },
    upgrades: options.upgrades ?? unusedUpgrades,
    operations: createOperationRegistry(),
    reset: unusedReset,
    runMutation: (purpose, work) => queue.run(purpose, work),
    hostView: createHostView({
      describeHostRoot: () => deps.hostRoot.describe(),
      isLockHeld: () => Promise.resolve(false),
      queue,
      log,
    }),
    startup: gate,
    daemon: {
      pid: 42,
      startedAt: 1_000,
      executable: '/x',
      socket: 'self-bound',
      socketPath: '/run/x.sock',
    },
    now: () => 3_500,
  };
  app = await buildApp(deps);
}

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'app-'));
  fake = { migrations: 0, host: linked, describes: 0, clock: 0 };
});
afterEach(async () => {
  await app.close();
  await rm(tmp, { recursive: true, force: true });
});

/** A logger whose lines the test reads back, parsed. */
function capturedLog(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    destination: {
      write: (line: string) => {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { log, lines };
}

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  return problemSchema.parse(JSON.parse(response.body));
}

describe('supervisor API', () => {
  it("never loads fastify's default compilers: every schema is zod's, validated and serialized", async () => {
    // Node's module cache is the process's: fastify and what it requires are
    // loaded by Node, outside vitest's module graph. (ajv itself is no sign:
    // from source, @aks-flex-node/api compiles the client's validators with it.)
    const defaultCompilers = () =>
      Object.keys(createRequire(import.meta.url).cache).filter((file) =>
        /[/\\]@fastify[/\\](ajv-compiler|fast-json-stringify-compiler)[/\\]/.test(file),
      );
    await build();
    const status = await app.inject({ method: 'GET', url: '/v1/status' });
    const refused = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload: { force: true },
    });
    expect(status.statusCode).toBe(200);
    expect(() => statusResponseSchema.parse(status.json())).not.toThrow();
    expect(refused.statusCode).toBe(400);
    expect(defaultCompilers()).toEqual([]);
  });

  it('GET /v1/status answers with the status schema', async () => {
    await build();
    const response = await app.inject({ method: 'GET', url: '/v1/status' });
    expect(response.statusCode).toBe(200);
    const status = statusResponseSchema.parse(response.json());
    expect(status.daemon.uptimeSeconds).toBe(2.5);
    expect(status.hostRoot.state).toBe('linked');
    expect(status.version.capabilities).toContain('host-root');
  });

  it('while the startup gate is shut, reads are served and a change is refused at once with 503 DAEMON_NOT_READY', async () => {
    const gate = createStartupGate();
    await build({ gate });
    const status = statusResponseSchema.parse(
      (await app.inject({ method: 'GET', url: '/v1/status' })).json(),
    );
    expect(status.startup.gate).toBe('shut');
    expect(status.startup.reason).toMatch(/starting/);
    const refused = expectProblem(
      await app.inject({ method: 'POST', url: '/v1/host-root/migrate', payload: {} }),
      503,
    );
    expect(refused.code).toBe('DAEMON_NOT_READY');
    expect(refused.detail).toContain('POST /v1/host-root/migrate');
    expect(refused.hint).toContain('aks-flex-node status');
    expect(fake.migrations).toBe(0);
    gate.open();
    const accepted = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload: {},
    });
    expect(accepted.statusCode).toBe(200);
    expect(fake.migrations).toBe(1);
  });

  it('a gate held for replacement refuses with its reason and says to restart the unit; it never reopens', async () => {
    const gate = createStartupGate();
    gate.noteMove('restart-queued');
    gate.hold(
      'the daemon queued its restart from the host root',
      'restart the agent (`systemctl restart aks-flex-node-agent`)',
    );
    gate.open();
    await build({ gate });
    const refused = expectProblem(
      await app.inject({ method: 'POST', url: '/v1/agent-upgrades', payload: {} }),
      503,
    );
    expect(refused.detail).toContain('queued its restart from the host root');
    expect(refused.hint).toContain('systemctl restart aks-flex-node-agent');
    const status = statusResponseSchema.parse(
      (await app.inject({ method: 'GET', url: '/v1/status' })).json(),
    );
    expect(status.startup).toEqual({
      gate: 'shut',
      reason: 'the daemon queued its restart from the host root',
      move: 'restart-queued',
    });
  });

  it('POST /v1/host-root/migrate runs the migration once', async () => {
    await build();
    const response = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload: {},
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ before: 'absent', after: linked });
    expect(fake.migrations).toBe(1);
  });

  it('refuses unknown fields with 400 problem+json and changes nothing', async () => {
    await build();
    const response = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload: { force: true },
    });
    const problem = expectProblem(response, 400);
    expect(problem.code).toBe('INVALID_ARGUMENT');
    expect(problem.detail).toContain('force');
    expect(fake.migrations).toBe(0);
  });

  it('a route validates its body with its declared schema and names the route', async () => {
    await build();
    const response = await app.inject({
      method: 'POST',
      url: '/v1/agent-upgrades',
      payload: { source: { url: 'https://example.test/a.tar.gz', binaryPath: '/x' } },
    });
    const problem = expectProblem(response, 400);
    expect(problem.code).toBe('INVALID_ARGUMENT');
    expect(problem.detail).toMatch(
      /^the request body for POST \/v1\/agent-upgrades is not valid: /,
    );
    expect(problem.hint).toBe('send only the documented fields (see docs/api.md)');
  });

  it('a response outside its declared schema is a 500, never sent', async () => {
    await build({
      upgrades: {
        ...unusedUpgrades,
        get: () => Promise.resolve({ id: 'op-1', surprise: true } as never),
      },
    });
    const response = await app.inject({ method: 'GET', url: '/v1/operations/op-1' });
    expect(expectProblem(response, 500).code).toBe('INTERNAL');
    // The problem names what was wrong; the operation itself was not sent.
    expect(JSON.parse(response.body)).not.toHaveProperty('id');
  });

  it('issue22#7 a corrupt operation record answers a 404 saying it was set aside, not a 500 forever', async () => {
    const paths = hostPathsUnder(tmp);
    const registry = createOperationRegistry();
    const { log, lines } = capturedLog();
    await build({
      log,
      upgrades: { ...unusedUpgrades, get: (id) => describeOperation(paths, registry, id) },
    });
    await mkdir(paths.operationsDir, { recursive: true });
    // A torn record, as a bad write or a disk fault leaves one.
    await writeFile(path.join(paths.operationsDir, 'op-1.json'), '{"id":"op-1","ki');
    for (let ask = 1; ask <= 2; ask++) {
      const response = await app.inject({ method: 'GET', url: '/v1/operations/op-1' });
      const problem = expectProblem(response, 404);
      expect(problem.code).toBe('NOT_FOUND');
      expect(problem.detail).toMatch(
        /^the record of operation op-1 was corrupt.* and is set aside as .*op-1\.json\.corrupt-\d{8}T\d{6}Z; its result is lost$/,
      );
    }
    expect(await readdir(paths.operationsDir)).toEqual([
      expect.stringMatching(/^op-1\.json\.corrupt-/),
    ]);
    // Logged where the operator looks: the journal names the set-aside file.
    expect(lines.some((line) => JSON.stringify(line).includes('op-1.json.corrupt-'))).toBe(true);
  });

  it('refuses a body over the limit with 413 problem+json and changes nothing', async () => {
    await build();
    const payload = JSON.stringify({ padding: 'x'.repeat(bodyLimitBytes + 1) });
    const response = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload,
      headers: { 'content-type': 'application/json' },
    });
    const problem = expectProblem(response, 413);
    expect(problem.hint).toContain('64 KiB');
    expect(fake.migrations).toBe(0);
  });

  it('refuses malformed JSON with 400', async () => {
    await build();
    const response = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload: '{"oops',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(response, 400);
    expect(fake.migrations).toBe(0);
  });

  it('logs a refused change with its request id, code and detail, and a status read not at all', async () => {
    const { log, lines } = capturedLog();
    await build({ gate: createStartupGate(), log });
    await app.inject({ method: 'GET', url: '/v1/status' });
    expect(lines).toEqual([]);
    await app.inject({ method: 'POST', url: '/v1/host-root/migrate', payload: {} });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request refused',
        reqId: 'req-2',
        code: 'DAEMON_NOT_READY',
        detail: expect.stringContaining('POST /v1/host-root/migrate') as unknown,
      }),
    ]);
  });

  it('logs a failed request at error with its request id, code and the error', async () => {
    const { log, lines } = capturedLog();
    await build({
      log,
      upgrades: {
        ...unusedUpgrades,
        get: () => Promise.reject(new Error('disk on fire')),
      },
    });
    await app.inject({ method: 'GET', url: '/v1/operations/op-1' });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'request failed',
        reqId: 'req-1',
        code: 'INTERNAL',
        err: expect.objectContaining({ message: 'disk on fire' }) as unknown,
      }),
    ]);
  });

  it('a shut gate refuses a change to an unknown route with 503, and a read of one is 404', async () => {
    await build({ gate: createStartupGate() });
    const refused = expectProblem(
      await app.inject({ method: 'POST', url: '/v1/nope', payload: {} }),
      503,
    );
    expect(refused.code).toBe('DAEMON_NOT_READY');
    expect(refused.detail).toContain('POST /v1/nope');
    const missing = expectProblem(await app.inject({ method: 'GET', url: '/v1/nope' }), 404);
    expect(missing.code).toBe('NOT_FOUND');
  });

  it('a shut gate refuses exactly the gated changes: migrate, an upgrade, a cancel', async () => {
    await build({ gate: createStartupGate() });
    const gated = new Set<string>([
      apiRoutes.migrateHostRoot.url,
      apiRoutes.beginAgentUpgrade.url,
      apiRoutes.cancelOperation.url,
    ]);
    for (const route of Object.values(apiRoutes)) {
      const response = await app.inject({
        method: route.method,
        url: routePath(route, { id: 'op-1', machine: 'kube1' }),
        ...(route.method === 'POST' ? { payload: {} } : {}),
      });
      const refused =
        response.statusCode === 503 &&
        problemSchema.parse(response.json()).code === 'DAEMON_NOT_READY';
      expect({ route: `${route.method} ${route.url}`, refused }).toEqual({
        route: `${route.method} ${route.url}`,
        refused: gated.has(route.url) && route.method !== 'GET',
      });
    }
  });

  it('a shut gate lets recovery through to its route', async () => {
    let recovered = 0;
    await build({
      gate: createStartupGate(),
      upgrades: {
        ...unusedUpgrades,
        recover: () => {
          recovered += 1;
          return unused();
        },
      },
    });
    await app.inject({ method: 'POST', url: '/v1/recovery', payload: {} });
    expect(recovered).toBe(1);
  });

  it('answers an unknown route with 404 problem+json', async () => {
    await build();
    const problem = expectProblem(await app.inject({ method: 'GET', url: '/v1/nope' }), 404);
    expect(problem.code).toBe('NOT_FOUND');
  });

  it('a second mutation while one runs gets 409 at once; reads still answer', async () => {
    await build({ blockMigration: true });
    const first = app.inject({ method: 'POST', url: '/v1/host-root/migrate', payload: {} });
    await expect.poll(() => fake.migrations).toBe(1);
    const second = await app.inject({ method: 'POST', url: '/v1/host-root/migrate', payload: {} });
    expect(expectProblem(second, 409).code).toBe('ACTIVATION_IN_PROGRESS');
    const status = statusResponseSchema.parse(
      (await app.inject({ method: 'GET', url: '/v1/status' })).json(),
    );
    expect(status.activationInProgress).toBe(true);
    fake.release?.();
    expect((await first).statusCode).toBe(200);
    expect(fake.migrations).toBe(1);
  });

  it("an operation's events from a daemon that did not run it come as one event with its state", async () => {
    const restarting = {
      id: 'upgrade-1',
      kind: 'agent-upgrade' as const,
      state: 'restarting' as const,
      phase: 'judging',
      startedAt: '2026-01-01T00:00:00.000Z',
    };
    await build({
      upgrades: {
        ...unusedUpgrades,
        get: (id) => Promise.resolve(id === 'upgrade-1' ? restarting : undefined),
      },
    });
    const known = await app.inject({ method: 'GET', url: '/v1/operations/upgrade-1/events' });
    expect(known.statusCode).toBe(200);
    expect(known.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = known.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(lines).toEqual([expect.objectContaining({ state: 'restarting', phase: 'judging' })]);
    const unknown = await app.inject({ method: 'GET', url: '/v1/operations/upgrade-2/events' });
    expect(expectProblem(unknown, 404).code).toBe('NOT_FOUND');
  });
});

describe('GET /v1/status looks at the host at each read', () => {
  const readStatus = async () =>
    statusResponseSchema.parse((await app.inject({ method: 'GET', url: '/v1/status' })).json());

  it('shows a change made through the mutation queue', async () => {
    await build({ migrateTo: moved });
    expect((await readStatus()).hostRoot.state).toBe('linked');
    const migrated = await app.inject({
      method: 'POST',
      url: '/v1/host-root/migrate',
      payload: {},
    });
    expect(migrated.statusCode).toBe(200);
    const status = await readStatus();
    expect(status.hostRoot).toEqual(moved);
    expect(status.activationInProgress).toBe(false);
  });

  it('shows a change made outside the daemon at the next read', async () => {
    await build();
    expect((await readStatus()).hostRoot.state).toBe('linked');
    // An offline tool moved the host.
    fake.host = moved;
    expect((await readStatus()).hostRoot.state).toBe('installed');
  });
});

/** One HTTP/1.1 exchange on an open connection: the response's head lines and body. */
async function exchange(
  connection: net.Socket,
  request: string,
): Promise<{ status: number; headers: string[]; body: string }> {
  let received = Buffer.alloc(0);
  const whole = new Promise<{ head: string; body: string }>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = received.subarray(0, end).toString();
      const length = Number(/^content-length: (\d+)$/im.exec(head)?.[1] ?? 'NaN');
      if (received.length < end + 4 + length) return;
      connection.off('data', onData);
      resolve({ head, body: received.subarray(end + 4, end + 4 + length).toString() });
    };
    connection.on('data', onData);
    connection.once('error', reject);
  });
  connection.write(request);
  const { head, body } = await whole;
  const [statusLine = '', ...headers] = head.split('\r\n');
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('GET /v1/status on the listening socket', () => {
  // Every request fastify routes: all of them, status polls included.
  let routed: string[];
  let socketPath: string;

  const listen = async (options: Parameters<typeof build>[0] = {}) => {
    await build(options);
    routed = [];
    app.addHook('onRequest', (request, _reply, done) => {
      routed.push(request.url);
      done();
    });
    socketPath = path.join(tmp, 'agent.sock');
    // As the daemon does (socket/listen.ts): shutdown's drain follows the connections.
    watchConnections(app.server);
    await app.listen({ path: socketPath });
  };
  const connect = async () => {
    const connection = net.connect(socketPath);
    await once(connection, 'connect');
    return connection;
  };
  const get = (url: string) => `GET ${url} HTTP/1.1\r\nHost: agent\r\n\r\n`;

  it('fastify routes a plain poll and answers it with the schema-checked JSON', async () => {
    await listen();
    const connection = await connect();
    try {
      const answer = await exchange(connection, get('/v1/status'));
      expect(routed).toEqual(['/v1/status']);
      expect(answer.status).toBe(200);
      expect(answer.headers).toContain('content-type: application/json; charset=utf-8');
      expect(statusResponseSchema.parse(JSON.parse(answer.body)).daemon.uptimeSeconds).toBe(2.5);
    } finally {
      connection.destroy();
    }
  });

  it("keeps fastify's server timeouts", async () => {
    await listen();
    // fastify's default keep-alive and the request timeout buildApp sets.
    expect(app.server.keepAliveTimeout).toBe(72_000);
    expect(app.server.requestTimeout).toBe(120_000);
  });

  it('refuses an answer outside the schema and logs it with the request id, as any route', async () => {
    const { log, lines } = capturedLog();
    const gate = openGate();
    await listen({ log, gate: { ...gate, view: () => ({ gate: 'ajar' }) as never } });
    const connection = await connect();
    try {
      const answer = await exchange(connection, get('/v1/status'));
      expect(answer.status).toBe(500);
      expect(problemSchema.parse(JSON.parse(answer.body)).code).toBe('INTERNAL');
      expect(lines.some((line) => line.level === 50 && line.reqId !== undefined)).toBe(true);
    } finally {
      connection.destroy();
    }
  });

  it('answers a poll that arrives once the server stops accepting', async () => {
    await listen();
    const connection = await connect();
    try {
      await exchange(connection, get('/v1/status'));
      await stopAccepting(app.server);
      const answer = await exchange(connection, get('/v1/status'));
      expect(answer.status).toBe(200);
      expect(routed).toEqual(['/v1/status', '/v1/status']);
    } finally {
      connection.destroy();
    }
  });
});
