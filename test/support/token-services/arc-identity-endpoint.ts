import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sendJson, startMockServer, type MockTokenService } from './mock-server.ts';

export interface ArcIdentityEndpoint extends MockTokenService {
  /** The token URL, as IDENTITY_ENDPOINT names it on an Arc machine. */
  readonly tokenUrl: string;
  issued(): number;
  /** Whether this service issued `token` (an API server stand-in checks bearer tokens with it). */
  hasIssued(token: string): boolean;
  /** Name this file in the next challenges instead of a fresh one (a rogue endpoint). */
  setRealm(file: string | undefined): void;
}

/**
 * A stand-in for an Arc machine's local identity endpoint (himdsd, port 40342)
 * on 127.0.0.1: a GET without credentials writes a random secret to
 * `<challengeDir>/<random>.key` (0600) and answers 401 with
 * `WWW-Authenticate: Basic realm=<that file>`; a GET with
 * `Authorization: Basic <secret>` gets a token `arc.<n>`, and the file goes.
 */
export async function startArcIdentityEndpoint(
  challengeDir: string,
  expiresInSeconds = 3600,
): Promise<ArcIdentityEndpoint> {
  let issued = 0;
  const tokens = new Set<string>();
  let realm: string | undefined;
  const live = new Map<string, string>();
  const server = await startMockServer(async (request, response) => {
    const url = new URL(request.path, 'http://arc');
    if (url.pathname !== '/metadata/identity/oauth2/token' || request.headers.metadata !== 'true') {
      sendJson(
        response,
        400,
        JSON.stringify({
          error: 'invalid_request',
          error_description: 'Required metadata header not specified',
        }),
      );
      return;
    }
    const resource = url.searchParams.get('resource') ?? '';
    const authorization = request.headers.authorization;
    if (typeof authorization !== 'string') {
      const secret = randomBytes(24).toString('hex');
      const file = path.join(challengeDir, `${randomBytes(8).toString('hex')}.key`);
      await writeFile(file, secret, { mode: 0o600 });
      live.set(secret, file);
      sendJson(response, 401, JSON.stringify({ error: 'unauthorized' }), {
        'www-authenticate': `Basic realm=${realm ?? file}`,
      });
      return;
    }
    const secret = authorization.replace(/^Basic\s+/i, '');
    const file = live.get(secret);
    if (file === undefined) {
      sendJson(
        response,
        401,
        JSON.stringify({
          error: 'invalid_client',
          error_description: 'the challenge answer does not match',
        }),
      );
      return;
    }
    live.delete(secret);
    await rm(file, { force: true });
    issued += 1;
    tokens.add(`arc.${issued}`);
    const expiresOn = Math.floor(Date.now() / 1000) + expiresInSeconds;
    sendJson(
      response,
      200,
      JSON.stringify({
        access_token: `arc.${issued}`,
        expires_in: String(expiresInSeconds),
        expires_on: String(expiresOn),
        resource,
        token_type: 'Bearer',
      }),
    );
  });
  return {
    ...server,
    tokenUrl: `${server.origin}/metadata/identity/oauth2/token`,
    issued: () => issued,
    hasIssued: (token) => tokens.has(token),
    setRealm: (file) => {
      realm = file;
    },
  };
}
