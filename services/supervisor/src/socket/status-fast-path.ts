import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import { apiRoutes } from '@aks-flex-node/api';
import type { StatusAnswer } from '../routes/status-answer.js';

/** The content type fastify sends with the status route's JSON; the length follows it, as in fastify's reply. */
const jsonContentType = 'application/json; charset=utf-8';

/**
 * The daemon's HTTP server, made for fastify (its `serverFactory`), with one
 * shortcut: a plain `GET /v1/status` whose answer is ready is written here,
 * before fastify. Status is what operators and their scripts poll, and
 * fastify's generic path (its request and reply objects, router, hooks and
 * logger plumbing) cost about 40% more CPU per poll than a bare node:http
 * server writing the same bytes (docs/performance.md, "Reads never wait").
 * The answer is the route's own ({@link StatusAnswer}: the same view, the
 * same zod-checked serializer, the same headers), so the shortcut changes
 * how fast a poll is answered, never what it is answered.
 *
 * Everything else goes to fastify, which answers it as it always has:
 * other routes and methods, a URL with a query string, a host view that
 * must be refreshed first, an answer that fails validation (fastify meets
 * the same failure and answers and logs it as problem+json), and any request
 * once the server has stopped accepting, so shutdown keeps fastify's
 * handling (`Connection: close`, the drain in connection-drain.ts).
 */
export function statusFastPathServer(status: StatusAnswer): FastifyServerFactory {
  return (fastifyHandler, options) => {
    const server = http.createServer(
      (options.http ?? {}) as http.ServerOptions,
      (request: IncomingMessage, response: ServerResponse) => {
        const body = isPlainStatusRead(request) && server.listening ? readyBody(status) : undefined;
        if (body === undefined) {
          fastifyHandler(request, response);
          return;
        }
        response.writeHead(200, {
          'content-type': jsonContentType,
          'content-length': String(Buffer.byteLength(body)),
        });
        response.end(body);
      },
    );
    // What fastify sets on a server it makes itself; one from a factory is the factory's to set.
    server.keepAliveTimeout = options.keepAliveTimeout as number;
    server.requestTimeout = options.requestTimeout as number;
    server.setTimeout(options.connectionTimeout as number);
    const maxRequestsPerSocket = options.maxRequestsPerSocket as number | null;
    if (maxRequestsPerSocket !== null && maxRequestsPerSocket > 0) {
      server.maxRequestsPerSocket = maxRequestsPerSocket;
    }
    return server;
  };
}

function isPlainStatusRead(request: IncomingMessage): boolean {
  return request.method === 'GET' && request.url === apiRoutes.status.url;
}

/**
 * The body when it can be written now. A failure is not handled here: the
 * request goes on to fastify's route, which meets the same failure and
 * answers and logs it like any route's.
 */
function readyBody(status: StatusAnswer): string | undefined {
  try {
    return status.bodyNow();
  } catch {
    return undefined;
  }
}
