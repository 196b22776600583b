import { sendJson, startMockServer, type MockTls, type MockTokenService } from './mock-server.ts';

export interface ApiServer extends MockTokenService {
  /** Every bearer token it was shown, accepted or not, in order. */
  readonly bearerTokens: string[];
}

/**
 * A stand-in for a cluster's API server on 127.0.0.1, over TLS: `GET /version`
 * answers only a request whose bearer token `accepts` recognises (one the
 * token stand-ins issued), and 401 with a Status otherwise, as kube-apiserver
 * does for an unknown token.
 */
export async function startApiServer(
  tls: MockTls,
  accepts: (token: string) => boolean,
): Promise<ApiServer> {
  const bearerTokens: string[] = [];
  const server = await startMockServer((request, response) => {
    const header = request.headers.authorization;
    const token = typeof header === 'string' ? header.replace(/^Bearer\s+/i, '') : '';
    bearerTokens.push(token);
    if (token === '' || !accepts(token)) {
      sendJson(
        response,
        401,
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'Unauthorized',
          reason: 'Unauthorized',
          code: 401,
        }),
      );
      return;
    }
    if (request.path.split('?')[0] === '/version') {
      sendJson(
        response,
        200,
        JSON.stringify({ major: '1', minor: '35', gitVersion: 'v1.35.6', platform: 'linux/amd64' }),
      );
      return;
    }
    sendJson(response, 404, JSON.stringify({ kind: 'Status', apiVersion: 'v1', code: 404 }));
  }, tls);
  return { ...server, bearerTokens };
}
