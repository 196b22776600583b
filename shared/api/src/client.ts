import http from 'node:http';
import net from 'node:net';
import { AgentError } from '@aks-flex-node/log';
import {
  checkAnswer,
  type AnswerName,
  type AnswerOf,
  type AnswerValidators,
  type GeneratedValidator,
} from './answer-validation.js';
import { answerValidators } from './answer-validators.js';
import {
  daemonAnswerNotJson,
  daemonErrorStatus,
  daemonUnreachable,
  errorFromProblem,
} from './daemon-errors.js';
import type { HostRootResponse, MigrateResponse } from './host-root.js';
import type { RegenerateNspawnHooksResponse } from './nspawn.js';
import { apiRoutes, routePath } from './routes.js';
import type { StatusResponse } from './status.js';
import type {
  AgentUpgradeRequest,
  Operation,
  OperationEvent,
  RecoveryResponse,
} from './upgrade.js';

/** Options for {@link createApiClient}. */
export interface ApiClientOptions {
  socketPath: string;
  /** How long the socket may stay silent before the daemon counts as not answering. */
  timeoutMs?: number;
  /**
   * Ends every request at once, rejecting with the signal's reason: a caller
   * that learns why no answer can come (the agent unit failing) stops
   * waiting, and its process exits without the request holding it open.
   */
  signal?: AbortSignal;
}

/** The one client every process uses to talk to the daemon. */
export interface ApiClient {
  status(): Promise<StatusResponse>;
  hostRoot(): Promise<HostRootResponse>;
  migrateHostRoot(): Promise<MigrateResponse>;
  beginAgentUpgrade(request: AgentUpgradeRequest): Promise<Operation>;
  operation(id: string): Promise<Operation>;
  /** Cancels an upgrade that has not begun to switch; resolves with it once it stopped. */
  cancelOperation(id: string): Promise<Operation>;
  /**
   * Calls `onEvent` for each event of the operation's stream until the daemon
   * ends it, or until `signal` aborts (rejecting with its reason).
   */
  followOperation(
    id: string,
    onEvent: (event: OperationEvent) => void,
    signal?: AbortSignal,
  ): Promise<void>;
  recover(message?: string): Promise<RecoveryResponse>;
  /** Starts a reset; the daemon answers once it holds the activation lock. */
  beginReset(): Promise<Operation>;
  /** Migrates the host root and rewrites one nspawn machine's hooks (what pre-start asks). */
  regenerateNspawnHooks(machine: string): Promise<RegenerateNspawnHooksResponse>;
}

/** One route of the table, with the name of its answer. */
interface Route<Name extends AnswerName> {
  method: string;
  url: string;
  answer: Name;
}

/**
 * Builds the client over the daemon's Unix socket: node:http, one request
 * per call, NDJSON for an operation's events. Every answer is checked
 * against its route's schema (the route table's `answer`) by the validator
 * generated from the zod schema the daemon serializes with; an error body
 * becomes an AgentError with the daemon's code and hint. Loads no zod, so
 * `status` and the nspawn hook start about as fast as a bare Node.js
 * (bench/nspawn-pre-start.sh). Throws DAEMON_UNREACHABLE when nothing
 * answers, DAEMON_ERROR for an answer outside the schema.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const call = async <Name extends AnswerName>(
    route: Route<Name>,
    body?: unknown,
    params?: Record<string, string>,
  ): Promise<AnswerOf<Name>> => {
    const url = routePath(route, params);
    const answer = await requestJson(options, route.method, url, body);
    return checkAnswer(validatorOf(route.answer), answer, `${route.method} ${url}`);
  };
  return {
    status: () => call(apiRoutes.status),
    hostRoot: () => call(apiRoutes.hostRoot),
    migrateHostRoot: () => call(apiRoutes.migrateHostRoot, {}),
    beginAgentUpgrade: (request) => call(apiRoutes.beginAgentUpgrade, request),
    operation: (id) => call(apiRoutes.operation, undefined, { id }),
    cancelOperation: (id) => call(apiRoutes.cancelOperation, undefined, { id }),
    followOperation: (id, onEvent, signal) => followEvents(options, id, onEvent, signal),
    beginReset: () => call(apiRoutes.beginReset, {}),
    recover: (message) => call(apiRoutes.recover, message === undefined ? {} : { message }),
    regenerateNspawnHooks: (machine) => call(apiRoutes.regenerateNspawnHooks, {}, { machine }),
  };
}

/**
 * The validator of one answer. A hot role's bundle holds only the validators
 * of the answers its role asks for (scripts/build.mjs, answersOfBundle), so
 * a role asking for another one is a build mistake, named as such rather
 * than a TypeError. Throws INTERNAL.
 */
function validatorOf<Name extends AnswerName>(name: Name): GeneratedValidator<AnswerOf<Name>> {
  const validate = (answerValidators() as Partial<AnswerValidators>)[name];
  if (validate === undefined) {
    throw new AgentError(
      'INTERNAL',
      `this command's bundle holds no validator for the daemon's ${name} answer`,
      {
        hint: `add ${name} to the bundle's answers in scripts/build.mjs (answersOfBundle) and rebuild`,
      },
    );
  }
  return validate as GeneratedValidator<AnswerOf<Name>>;
}

interface RawResponse {
  status: number;
  contentType: string;
  body: string;
}

async function requestJson(
  options: ApiClientOptions,
  method: string,
  url: string,
  body: unknown,
): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const raw = await sendRequest(options, method, url, payload);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.body) as unknown;
  } catch (error) {
    throw daemonAnswerNotJson(url, raw.contentType, error);
  }
  if (raw.status >= 400) throw errorFromAnswer(method, url, raw.status, parsed);
  return parsed;
}

/** The AgentError for an error answer: the daemon's own when it is a problem body. */
function errorFromAnswer(method: string, url: string, status: number, body: unknown) {
  const problem = validatorOf('problem');
  return problem(body) ? errorFromProblem(body) : daemonErrorStatus(method, url, status);
}

/**
 * Each request on a connection of its own, made by net.createConnection,
 * not through http's agent: one request per connection is what every
 * client here makes (a one-shot command, the nspawn hook), and the agent's
 * bookkeeping works out a TLS server name with net.isIP, whose first call
 * compiles the IPv6 pattern: about 5 ms of every hook's and `status`'s
 * start on the 2-core bench machine (node --cpu-prof), for a name a Unix
 * socket never uses. Without an agent, http sends `Connection: close`.
 */
function unixSocketConnection(socketPath: string): http.RequestOptions {
  return { socketPath, createConnection: () => net.createConnection({ path: socketPath }) };
}

function sendRequest(
  options: ApiClientOptions,
  method: string,
  url: string,
  payload: string | undefined,
): Promise<RawResponse> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const request = http.request(
      {
        ...unixSocketConnection(options.socketPath),
        method,
        path: url,
        headers,
        signal: options.signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => {
          reject(daemonUnreachable(options.socketPath, error));
        });
        response.on('end', () => {
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'] ?? '',
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    // Set on the request, not as the `timeout` option: without an agent
    // nothing passes that option on to the socket.
    request.setTimeout(timeoutMs);
    request.on('timeout', () => {
      request.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    request.on('error', (error) => {
      reject(
        options.signal?.aborted === true
          ? (options.signal.reason as Error)
          : daemonUnreachable(options.socketPath, error),
      );
    });
    request.end(payload);
  });
}

/**
 * Reads an operation's NDJSON event stream line by line, each line checked
 * against the operation event's schema. The stream has no request timeout
 * (a download may take minutes); it ends when the daemon ends it (restart
 * or terminal state) or the connection drops.
 */
function followEvents(
  options: ApiClientOptions,
  id: string,
  onEvent: (event: OperationEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const route = apiRoutes.operationEvents;
  const url = routePath(route, { id });
  const request = `${route.method} ${url}`;
  return new Promise((resolve, reject) => {
    // In the executor: an INTERNAL for a bundle without it becomes the rejection.
    const validate = validatorOf(route.answer);
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const stream = http.request(
      { ...unixSocketConnection(options.socketPath), method: route.method, path: url },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 400) {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            reject(
              errorFromAnswer(
                route.method,
                url,
                status,
                parseJsonOrUndefined(Buffer.concat(chunks).toString('utf8')),
              ),
            );
          });
          return;
        }
        let buffered = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf('\n');
          try {
            while (newline >= 0) {
              const line = buffered.slice(0, newline).trim();
              buffered = buffered.slice(newline + 1);
              if (line !== '') onEvent(checkAnswer(validate, parseLine(url, line), request));
              newline = buffered.indexOf('\n');
            }
          } catch (error) {
            response.destroy();
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        response.on('end', () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
        response.on('error', (error) => {
          reject(daemonUnreachable(options.socketPath, error));
        });
      },
    );
    // The stream has no deadline of its own; the caller's signal ends it with its reason.
    const onAbort = () => {
      reject(signal?.reason as Error);
      stream.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('error', (error) => {
      reject(daemonUnreachable(options.socketPath, error));
    });
    stream.end();
  });
}

function parseLine(url: string, line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch (error) {
    throw daemonAnswerNotJson(url, 'application/x-ndjson', error);
  }
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
