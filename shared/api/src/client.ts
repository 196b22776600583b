import http from 'node:http';
import type { z } from 'zod';
import { AgentError } from '@aks-flex-node/log';
import {
  daemonAnswerNotJson,
  daemonErrorStatus,
  daemonUnreachable,
  errorFromProblem,
} from './daemon-errors.js';
import { hostRootResponseSchema, migrateResponseSchema } from './host-root.js';
import { regenerateNspawnHooksResponseSchema } from './nspawn.js';
import { problemSchema } from './problem.js';
import { apiRoutes, routePath, type ApiRoute } from './routes.js';
import { statusResponseSchema } from './status.js';
import {
  operationEventSchema,
  operationSchema,
  recoveryResponseSchema,
  type AgentUpgradeRequest,
  type OperationEvent,
} from './upgrade.js';

/** Options for {@link createApiClient}. */
export interface ApiClientOptions {
  socketPath: string;
  /** How long one request may take before the daemon counts as not answering. */
  timeoutMs?: number;
}

/** The typed client every process uses to talk to the daemon. */
export interface ApiClient {
  status(): Promise<z.infer<typeof statusResponseSchema>>;
  hostRoot(): Promise<z.infer<typeof hostRootResponseSchema>>;
  migrateHostRoot(): Promise<z.infer<typeof migrateResponseSchema>>;
  beginAgentUpgrade(request: AgentUpgradeRequest): Promise<z.infer<typeof operationSchema>>;
  operation(id: string): Promise<z.infer<typeof operationSchema>>;
  /** Cancels an upgrade that has not begun to switch; resolves with it once it stopped. */
  cancelOperation(id: string): Promise<z.infer<typeof operationSchema>>;
  /**
   * Calls `onEvent` for each event of the operation's stream until the daemon
   * ends it, or until `signal` aborts (rejecting with its reason).
   */
  followOperation(
    id: string,
    onEvent: (event: OperationEvent) => void,
    signal?: AbortSignal,
  ): Promise<void>;
  recover(message?: string): Promise<z.infer<typeof recoveryResponseSchema>>;
  /** Starts a reset; the daemon answers once it holds the activation lock. */
  beginReset(): Promise<z.infer<typeof operationSchema>>;
  /** Migrates the host root and rewrites one nspawn machine's hooks (what pre-start asks). */
  regenerateNspawnHooks(
    machine: string,
  ): Promise<z.infer<typeof regenerateNspawnHooksResponseSchema>>;
}

/**
 * Builds a client over the daemon's Unix socket. Every response is parsed with
 * the same zod schema the server declares; an error body becomes an AgentError
 * with the daemon's code and hint. Throws DAEMON_UNREACHABLE when nothing answers.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const call = async <T>(
    route: ApiRoute,
    schema: z.ZodType<T>,
    body?: unknown,
    params?: Record<string, string>,
  ) => schema.parse(await requestJson(options, route.method, routePath(route, params), body));
  return {
    status: () => call(apiRoutes.status, statusResponseSchema),
    hostRoot: () => call(apiRoutes.hostRoot, hostRootResponseSchema),
    migrateHostRoot: () => call(apiRoutes.migrateHostRoot, migrateResponseSchema, {}),
    beginAgentUpgrade: (request) => call(apiRoutes.beginAgentUpgrade, operationSchema, request),
    operation: (id) => call(apiRoutes.operation, operationSchema, undefined, { id }),
    cancelOperation: (id) => call(apiRoutes.cancelOperation, operationSchema, undefined, { id }),
    followOperation: (id, onEvent, signal) => followEvents(options, id, onEvent, signal),
    beginReset: () => call(apiRoutes.beginReset, operationSchema, {}),
    recover: (message) =>
      call(apiRoutes.recover, recoveryResponseSchema, message === undefined ? {} : { message }),
    regenerateNspawnHooks: (machine) =>
      call(apiRoutes.regenerateNspawnHooks, regenerateNspawnHooksResponseSchema, {}, { machine }),
  };
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
  const parsed = parseBody(raw, url);
  if (raw.status >= 400) {
    const problem = problemSchema.safeParse(parsed);
    if (problem.success) throw errorFromProblem(problem.data);
    throw daemonErrorStatus(method, url, raw.status);
  }
  return parsed;
}

function parseBody(raw: RawResponse, url: string): unknown {
  try {
    return JSON.parse(raw.body) as unknown;
  } catch (error) {
    throw daemonAnswerNotJson(url, raw.contentType, error);
  }
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
      { socketPath: options.socketPath, method, path: url, headers, timeout: timeoutMs },
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
    request.on('timeout', () => {
      request.destroy(new Error(`no answer within ${timeoutMs} ms`));
    });
    request.on('error', (error) => {
      reject(daemonUnreachable(options.socketPath, error));
    });
    request.end(payload);
  });
}

/**
 * Reads an operation's NDJSON event stream line by line. The stream has no
 * request timeout (a download may take minutes); it ends when the daemon
 * ends it (restart or terminal state) or the connection drops.
 */
function followEvents(
  options: ApiClientOptions,
  id: string,
  onEvent: (event: OperationEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const url = routePath(apiRoutes.operationEvents, { id });
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const request = http.request(
      { socketPath: options.socketPath, method: apiRoutes.operationEvents.method, path: url },
      (response) => {
        if ((response.statusCode ?? 0) >= 400) {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const problem = problemSchema.safeParse(
              parseJsonOrUndefined(Buffer.concat(chunks).toString('utf8')),
            );
            reject(
              problem.success
                ? errorFromProblem(problem.data)
                : new AgentError(
                    'DAEMON_ERROR',
                    `the daemon answered ${url} with status ${response.statusCode ?? 0}`,
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
          while (newline >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line !== '') onEvent(operationEventSchema.parse(JSON.parse(line)));
            newline = buffered.indexOf('\n');
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
      request.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => {
      reject(daemonUnreachable(options.socketPath, error));
    });
    request.end();
  });
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
