import { sendJson, startMockServer, type MockTokenService } from './mock-server.ts';

export interface ImdsEndpoint extends MockTokenService {
  /** The token URL, as AKS_FLEX_NODE_IMDS_ENDPOINT takes it. */
  readonly tokenUrl: string;
  issued(): number;
  /** Whether this service issued `token` (an API server stand-in checks bearer tokens with it). */
  hasIssued(token: string): boolean;
}

export interface ImdsOptions {
  /** User-assigned identities the VM has; a request naming another is refused. */
  userAssignedClientIds?: string[];
  /** Whether the VM has a system-assigned identity; default true. */
  systemAssigned?: boolean;
  expiresInSeconds?: number;
}

/**
 * A stand-in for a VM's IMDS token endpoint on 127.0.0.1 (plain http, as the
 * real one on 169.254.169.254): requires `Metadata: true`, an api-version and
 * a resource; `client_id` picks a user-assigned identity. Tokens are
 * `imds.<clientId|system>.<n>`, with `expires_on` in epoch seconds as a string.
 */
export async function startImdsEndpoint(options: ImdsOptions = {}): Promise<ImdsEndpoint> {
  let issued = 0;
  const tokens = new Set<string>();
  const expiresIn = options.expiresInSeconds ?? 3600;
  const server = await startMockServer((request, response) => {
    const url = new URL(request.path, 'http://imds');
    if (url.pathname !== '/metadata/identity/oauth2/token') {
      sendJson(response, 404, JSON.stringify({ error: 'not_found' }));
      return;
    }
    if (request.headers.metadata !== 'true') {
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
    if (url.searchParams.get('api-version') === null || resource === '') {
      sendJson(
        response,
        400,
        JSON.stringify({
          error: 'invalid_request',
          error_description: 'api-version and resource are required',
        }),
      );
      return;
    }
    const clientId = url.searchParams.get('client_id');
    const known =
      clientId === null
        ? (options.systemAssigned ?? true)
        : (options.userAssignedClientIds ?? []).includes(clientId);
    if (!known) {
      sendJson(
        response,
        400,
        JSON.stringify({ error: 'invalid_request', error_description: 'Identity not found' }),
      );
      return;
    }
    issued += 1;
    const token = `imds.${clientId ?? 'system'}.${issued}`;
    tokens.add(token);
    const expiresOn = Math.floor(Date.now() / 1000) + expiresIn;
    sendJson(
      response,
      200,
      JSON.stringify({
        access_token: token,
        client_id: clientId ?? 'system',
        expires_in: String(expiresIn),
        expires_on: String(expiresOn),
        not_before: String(expiresOn - expiresIn),
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
  };
}
