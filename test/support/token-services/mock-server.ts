import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** A request a mock token service received, for assertions (headers lower-cased). */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A forced answer: every request gets it until cleared (an endpoint that fails). */
export interface ForcedFailure {
  readonly status: number;
  readonly body?: string;
}

/** What every mock token service offers a test. */
export interface MockTokenService {
  /** scheme://127.0.0.1:port, no trailing slash. */
  readonly origin: string;
  readonly requests: ReceivedRequest[];
  /** Make every request fail with this answer (undefined: serve normally again). */
  failWith(failure: ForcedFailure | undefined): void;
  close(): Promise<void>;
}

/** TLS material for a mock served over https. */
export interface MockTls {
  readonly key: string;
  readonly cert: string;
}

export type MockHandler = (
  request: ReceivedRequest,
  response: ServerResponse,
) => void | Promise<void>;

/** Starts a server on 127.0.0.1 (https with `tls`, else http) that records each request, then hands it to `handle`. */
export async function startMockServer(
  handle: MockHandler,
  tls?: MockTls,
): Promise<MockTokenService> {
  const requests: ReceivedRequest[] = [];
  let failure: ForcedFailure | undefined;
  const listener = (incoming: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ReceivedRequest = {
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      if (failure !== undefined) {
        sendJson(
          response,
          failure.status,
          failure.body ??
            JSON.stringify({
              error: 'forced_failure',
              error_description: 'the test made this endpoint fail',
            }),
        );
        return;
      }
      Promise.resolve(handle(request, response)).catch((error: unknown) => {
        sendJson(
          response,
          500,
          JSON.stringify({ error: 'mock_error', error_description: String(error) }),
        );
      });
    });
  };
  const server: Server =
    tls === undefined ? createHttpServer(listener) : createHttpsServer(tls, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    failWith: (next) => {
      failure = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
      }),
  };
}

/** Answers with a JSON body (already serialised) and extra headers. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(body);
}
