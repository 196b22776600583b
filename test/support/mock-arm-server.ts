// A stand-in for Azure Resource Manager's listBootstrapData action, on
// 127.0.0.1. ARM is a remote service that cannot be reached from the test
// machines (nor from the e2e hosts, which have a private network), so tests
// run this local server speaking the same protocol instead:
//
//   POST /subscriptions/S/resourceGroups/RG/providers/Microsoft.ContainerService
//        /managedClusters/C/agentPools/P/listBootstrapData?api-version=V
//   Authorization: Bearer <ARM access token>
//   -> 200 application/json, the pool's bootstrap data
//   -> 401/403/404/400 {"error":{"code","message"}} as ARM answers
//
// Imported by vitest suites (startMockArm), or run as a script by the bats
// suite and inside e2e hosts with the workspace's Node.js 24, which strips the
// types: `node test/support/mock-arm-server.ts CONFIG.json`. It imports only
// Node's built-in modules so that it runs from any directory.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** How the mock ARM answers. */
export interface MockArmConfig {
  /** The managed cluster's resource ID the pool belongs to. */
  readonly clusterResourceId: string;
  readonly agentPoolName: string;
  /** The ARM access token a request must bear. */
  readonly armToken: string;
  /** The api-version a request must name. Default 2026-05-02-preview. */
  readonly apiVersion?: string;
  /** The bootstrap data to answer with. */
  readonly response: unknown;
  /** Statuses to answer the first requests with, one each, before succeeding (e.g. [503, 429]). */
  readonly failFirst?: readonly number[];
  /** A status every request gets instead of the data (e.g. 403), after any failFirst. */
  readonly alwaysFail?: number;
  /** Appends one JSON line per request: method, path, query, whether the token matched. */
  readonly requestLog?: string;
  /** Port to listen on; 0 (default) picks a free one. */
  readonly port?: number;
  /** Writes the port here once listening, for scripts. */
  readonly portFile?: string;
}

/** A running mock ARM. */
export interface MockArm {
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** One request as the mock saw it; never the token itself. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly apiVersion: string | null;
  readonly tokenMatched: boolean;
  readonly status: number;
}

const defaultApiVersion = '2026-05-02-preview';

/** Starts the mock on 127.0.0.1; resolves once it listens. */
export async function startMockArm(config: MockArmConfig): Promise<MockArm> {
  const requests: RecordedRequest[] = [];
  const failFirst = [...(config.failFirst ?? [])];
  const server = createServer((request, response) => {
    void answer(config, failFirst, request, response).then((recorded) => {
      requests.push(recorded);
      if (config.requestLog !== undefined) {
        appendFileSync(config.requestLog, `${JSON.stringify(recorded)}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(config.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  if (config.portFile !== undefined) writeFileSync(config.portFile, `${port}\n`);
  return { url: `http://127.0.0.1:${port}`, requests, close: () => closeServer(server) };
}

async function answer(
  config: MockArmConfig,
  failFirst: number[],
  request: IncomingMessage,
  response: ServerResponse,
): Promise<RecordedRequest> {
  // The body is read whole before answering, as ARM does.
  for await (const chunk of request) {
    if (!(chunk instanceof Buffer)) break;
  }
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const expectedPath = `${config.clusterResourceId}/agentPools/${config.agentPoolName}/listBootstrapData`;
  const tokenMatched = request.headers.authorization === `Bearer ${config.armToken}`;
  const apiVersion = url.searchParams.get('api-version');
  const status = statusFor();
  const recorded = {
    method: request.method ?? '',
    path: url.pathname,
    apiVersion,
    tokenMatched,
    status,
  };
  if (status === 200) send(response, 200, config.response);
  else send(response, status, armError(status), status === 429 ? { 'retry-after': '7' } : {});
  return recorded;

  function statusFor(): number {
    if (request.method !== 'POST') return 405;
    if (url.pathname.toLowerCase() !== expectedPath.toLowerCase()) return 404;
    if (!tokenMatched) return 401;
    const early = failFirst.shift();
    if (early !== undefined) return early;
    if (config.alwaysFail !== undefined) return config.alwaysFail;
    if (apiVersion !== (config.apiVersion ?? defaultApiVersion)) return 400;
    return 200;
  }
}

function armError(status: number): unknown {
  const codes: Record<number, [string, string]> = {
    400: ['InvalidApiVersionParameter', 'The api-version is not supported.'],
    401: ['InvalidAuthenticationToken', 'The access token is invalid.'],
    403: [
      'AuthorizationFailed',
      'The client does not have authorization to perform action listBootstrapData.',
    ],
    404: ['ResourceNotFound', 'The agent pool was not found.'],
    405: ['MethodNotAllowed', 'Only POST is allowed.'],
    429: ['TooManyRequests', 'Too many requests; retry later.'],
  };
  const [code, message] = codes[status] ?? ['InternalServerError', 'An internal error occurred.'];
  return { error: { code, message } };
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const data = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(data),
    ...headers,
  });
  response.end(data);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => {
      if (error === undefined) resolve();
      else reject(error);
    });
    server.closeAllConnections();
  });
}

// As a script: the config file is the one argument; serves until killed.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const configFile = process.argv[2];
  if (configFile === undefined) {
    process.stderr.write('usage: node mock-arm-server.ts CONFIG.json\n');
    process.exit(2);
  }
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as MockArmConfig;
  const arm = await startMockArm(config);
  process.stderr.write(`mock ARM listening on ${arm.url}\n`);
}
