import { createPublicKey, verify, X509Certificate, constants } from 'node:crypto';
import { sendJson, startMockServer, type MockTls, type MockTokenService } from './mock-server.ts';

/** An app registration the authority knows, with the one proof it accepts. */
export type RegisteredClient =
  | { clientId: string; secret: string }
  | { clientId: string; certificatePem: string }
  | { clientId: string; federatedToken: string };

export interface EntraAuthority extends MockTokenService {
  readonly tenantId: string;
  /** How many access tokens it has issued. */
  issued(): number;
  /** Whether this service issued `token` (an API server stand-in checks bearer tokens with it). */
  hasIssued(token: string): boolean;
}

export interface EntraAuthorityOptions {
  tenantId: string;
  clients: RegisteredClient[];
  /** https with this; plain http (only for AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS) without. */
  tls?: MockTls;
  /** Lifetime of issued tokens; default 3600. */
  expiresInSeconds?: number;
}

/**
 * A stand-in for Entra ID on 127.0.0.1: the tenant's OpenID metadata and its
 * v2.0 token endpoint for the client credentials grant, checking a client
 * secret, a certificate-signed assertion (RS256/PS256 against the registered
 * certificate) or a federated token. Tokens are `entra.<clientId>.<n>`.
 */
export async function startEntraAuthority(options: EntraAuthorityOptions): Promise<EntraAuthority> {
  let issued = 0;
  const tokens = new Set<string>();
  const expiresIn = options.expiresInSeconds ?? 3600;
  const tenant = options.tenantId;
  let origin = '';
  const server = await startMockServer((request, response) => {
    const path = request.path.split('?')[0] ?? '';
    if (request.method === 'GET' && path === `/${tenant}/v2.0/.well-known/openid-configuration`) {
      sendJson(response, 200, JSON.stringify(openIdMetadata(origin, tenant)));
      return;
    }
    if (request.method === 'POST' && path === `/${tenant}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(request.body);
      const refusal = refuseGrant(form, options.clients, `${origin}/${tenant}/oauth2/v2.0/token`);
      if (refusal !== undefined) {
        sendJson(
          response,
          refusal.status,
          JSON.stringify({ error: refusal.error, error_description: refusal.description }),
        );
        return;
      }
      issued += 1;
      const token = `entra.${form.get('client_id') ?? ''}.${issued}`;
      tokens.add(token);
      sendJson(
        response,
        200,
        JSON.stringify({
          token_type: 'Bearer',
          expires_in: expiresIn,
          ext_expires_in: expiresIn,
          access_token: token,
        }),
      );
      return;
    }
    sendJson(
      response,
      404,
      JSON.stringify({
        error: 'not_found',
        error_description: `no ${request.method} ${path} on this authority`,
      }),
    );
  }, options.tls);
  // The metadata names https URLs even when served over plain http: MSAL
  // checks that the issuer is the authority it was given, which is always
  // https to MSAL (shared/azure-credential sends the requests over http).
  origin = server.origin.replace(/^http:/, 'https:');
  return {
    ...server,
    tenantId: tenant,
    issued: () => issued,
    hasIssued: (token) => tokens.has(token),
  };
}

function openIdMetadata(origin: string, tenant: string): Record<string, unknown> {
  const base = `${origin}/${tenant}`;
  return {
    token_endpoint: `${base}/oauth2/v2.0/token`,
    authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
    end_session_endpoint: `${base}/oauth2/v2.0/logout`,
    jwks_uri: `${base}/discovery/v2.0/keys`,
    issuer: `${base}/v2.0`,
    token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'],
  };
}

interface Refusal {
  status: number;
  error: string;
  description: string;
}

function refuseGrant(
  form: URLSearchParams,
  clients: RegisteredClient[],
  audience: string,
): Refusal | undefined {
  if (form.get('grant_type') !== 'client_credentials') {
    return {
      status: 400,
      error: 'unsupported_grant_type',
      description: 'AADSTS70003: only client_credentials here',
    };
  }
  if ((form.get('scope') ?? '') === '') {
    return { status: 400, error: 'invalid_request', description: 'AADSTS90014: scope is missing' };
  }
  const client = clients.find((candidate) => candidate.clientId === form.get('client_id'));
  if (client === undefined) {
    return {
      status: 400,
      error: 'unauthorized_client',
      description: 'AADSTS700016: application not found in the directory',
    };
  }
  const invalid = {
    status: 401,
    error: 'invalid_client',
    description: 'AADSTS7000215: Invalid client secret provided.',
  };
  if ('secret' in client) return form.get('client_secret') === client.secret ? undefined : invalid;
  const assertion = form.get('client_assertion') ?? '';
  if ('federatedToken' in client) {
    return assertion === client.federatedToken
      ? undefined
      : { ...invalid, description: 'AADSTS700211: No matching federated identity record found.' };
  }
  return assertionSignedBy(assertion, client.certificatePem, audience)
    ? undefined
    : { ...invalid, description: 'AADSTS700027: Client assertion failed signature validation.' };
}

/** Whether a JWT client assertion is signed by the certificate's key and addressed to the token endpoint. */
function assertionSignedBy(assertion: string, certificatePem: string, audience: string): boolean {
  const [header, payload, signature] = assertion.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return false;
  const { alg } = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string };
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { aud?: string };
  if (claims.aud !== audience) return false;
  const key = createPublicKey(
    new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'pem' }),
  );
  const data = Buffer.from(`${header}.${payload}`);
  const sig = Buffer.from(signature, 'base64url');
  if (alg === 'RS256') return verify('sha256', data, key, sig);
  if (alg === 'PS256') {
    return verify(
      'sha256',
      data,
      { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
      sig,
    );
  }
  return false;
}
