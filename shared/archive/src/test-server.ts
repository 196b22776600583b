import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** Answers one request; `url` is the request path with its query. */
export type Route = (request: IncomingMessage, response: ServerResponse) => void;

/** A running {@link serveRoutes} server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  /** The request paths (without query) served so far, in order. */
  requests: string[];
}

/**
 * An HTTP server on 127.0.0.1 (never another address) at a free port,
 * routing by path without the query, closed when the test finishes. An
 * unknown path answers 404.
 */
export async function serveRoutes(routes: Record<string, Route>): Promise<TestServer> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://test').pathname;
    requests.push(pathname);
    const route = routes[pathname];
    if (route === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
      return;
    }
    route(request, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, requests };
}

/** A route that answers 200 with `body`, with a Content-Length unless told not to. */
export function sendBody(body: Buffer, options: { contentLength?: boolean } = {}): Route {
  return (_request, response) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/gzip' };
    if (options.contentLength ?? true) headers['content-length'] = body.length;
    response.writeHead(200, headers);
    response.end(body);
  };
}

/** A route that redirects to `location` with `status` (302 by default). */
export function redirectTo(location: string, status = 302): Route {
  return (_request, response) => {
    response.writeHead(status, { location });
    response.end();
  };
}

/** A route that answers 200 with `headers` and then nothing, holding the connection open. */
export function stall(headers: Record<string, string> = {}): Route {
  return (_request, response) => {
    response.writeHead(200, headers);
    response.flushHeaders();
  };
}
