/**
 * The credential module against local stand-ins for Entra ID, IMDS and Arc's
 * identity endpoint (test/support/token-services): the real services are
 * remote or host-provided and cannot be reached from a test. The authority is
 * served over plain http here, with the insecure-test switch on, because this
 * process cannot be told to trust a test CA; the `token` command's namespace
 * tests run the built executable against the https authority.
 */
import { mkdir, mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAgentError } from '@aks-flex-node/log';
import {
  startArcIdentityEndpoint,
  type ArcIdentityEndpoint,
} from '../../../test/support/token-services/arc-identity-endpoint.ts';
import {
  startEntraAuthority,
  type EntraAuthority,
} from '../../../test/support/token-services/entra-authority.ts';
import {
  startImdsEndpoint,
  type ImdsEndpoint,
} from '../../../test/support/token-services/imds-endpoint.ts';
import { makeTestPki, type TestPki } from '../../../test/support/token-services/test-pki.ts';
import type { AzureAuthSetting } from './auth-setting.js';
import { createAzureCredential } from './create-credential.js';
import type { CredentialEndpoints } from './endpoints.js';

const scope = '6dae42f8-4368-4678-94ff-3960e28e3630/.default';
const tenantId = 'tenant-1';
const secret = 'sp-secret-Zq8~never-printed';
const federatedToken = 'federated.jwt.never-printed';

let dir: string;
let pki: TestPki;
let authority: EntraAuthority;
let imds: ImdsEndpoint;
let arc: ArcIdentityEndpoint;
let endpoints: CredentialEndpoints;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'azure-credential-'));
  pki = await makeTestPki(dir);
  await mkdir(path.join(dir, 'tokens'), { mode: 0o700 });
  authority = await startEntraAuthority({
    tenantId,
    clients: [
      { clientId: 'sp-secret', secret },
      { clientId: 'sp-cert', certificatePem: pki.client.certPem },
      { clientId: 'workload', federatedToken },
    ],
  });
  imds = await startImdsEndpoint({ userAssignedClientIds: ['mi-user'] });
  arc = await startArcIdentityEndpoint(path.join(dir, 'tokens'));
  endpoints = {
    authorityHost: authority.origin,
    imdsEndpoint: imds.tokenUrl,
    arcEndpoint: arc.tokenUrl,
    arcChallengeDir: path.join(dir, 'tokens'),
    allowInsecure: true,
  };
}, 30_000);

afterAll(async () => {
  await Promise.all([authority.close(), imds.close(), arc.close()]);
  await rm(dir, { recursive: true, force: true });
});

async function tokenFor(setting: AzureAuthSetting, at = endpoints): Promise<string> {
  const credential = await createAzureCredential(setting, at);
  const issued = await credential.getToken(scope);
  expect(issued.expiresOnTimestamp).toBeGreaterThan(Date.now() + 3_000_000);
  return issued.token;
}

/** The CREDENTIAL_FAILED error a setting gives, with no secret in its text. */
async function failureOf(
  setting: AzureAuthSetting,
  at = endpoints,
): Promise<{ message: string; hint: string }> {
  const error: unknown = await createAzureCredential(setting, at)
    .then((credential) => credential.getToken(scope))
    .then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
  expect(isAgentError(error, 'CREDENTIAL_FAILED'), String(error)).toBe(true);
  const { message, hint = '' } = error as { message: string; hint?: string };
  const cause = String((error as Error).cause);
  for (const text of [message, hint, cause]) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(federatedToken);
  }
  return { message, hint };
}

describe('createAzureCredential: every login method the Go agent configures', () => {
  it('issue23 a service principal with an inline secret gets a token from Entra ID', async () => {
    const token = await tokenFor({
      kind: 'service-principal-secret',
      tenantId,
      clientId: 'sp-secret',
      secret: { value: secret },
    });
    expect(token).toMatch(/^entra\.sp-secret\.\d+$/);
  });

  it('issue23 a secret file is read without its trailing newline', async () => {
    const file = path.join(dir, 'secret');
    await writeFile(file, `${secret}\n`, { mode: 0o600 });
    const token = await tokenFor({
      kind: 'service-principal-secret',
      tenantId,
      clientId: 'sp-secret',
      secret: { file },
    });
    expect(token).toMatch(/^entra\.sp-secret\./);
  });

  it('issue23 a PEM certificate is detected by content, whatever its name, and signs the assertion', async () => {
    const file = path.join(dir, 'sp-credential');
    await copyFile(pki.client.pemFile, file);
    const token = await tokenFor({
      kind: 'service-principal-certificate',
      tenantId,
      clientId: 'sp-cert',
      certificateFile: file,
    });
    expect(token).toMatch(/^entra\.sp-cert\./);
  });

  it('issue23 an unencrypted PKCS#12 .pfx certificate signs the assertion', async () => {
    const token = await tokenFor({
      kind: 'service-principal-certificate',
      tenantId,
      clientId: 'sp-cert',
      certificateFile: pki.client.pfxFile,
    });
    expect(token).toMatch(/^entra\.sp-cert\./);
  });

  it('issue23 a system-assigned managed identity asks IMDS with the resource and no client id', async () => {
    expect(await tokenFor({ kind: 'managed-identity' })).toMatch(/^imds\.system\./);
    const last = imds.requests.at(-1);
    expect(last?.headers.metadata).toBe('true');
    expect(last?.path).toContain(
      `resource=${encodeURIComponent('6dae42f8-4368-4678-94ff-3960e28e3630')}`,
    );
    expect(last?.path).not.toContain('client_id');
  });

  it('issue23 a user-assigned managed identity names its client id', async () => {
    expect(await tokenFor({ kind: 'managed-identity', clientId: 'mi-user' })).toMatch(
      /^imds\.mi-user\./,
    );
  });

  it("issue23 Arc's identity endpoint: the 401 names a challenge file, whose contents go back as Basic auth", async () => {
    const before = arc.requests.length;
    expect(await tokenFor({ kind: 'arc' })).toMatch(/^arc\.\d+$/);
    const [challenge, answer] = arc.requests.slice(before);
    expect(challenge?.headers.authorization).toBeUndefined();
    expect(answer?.headers.authorization).toMatch(/^Basic [0-9a-f]{48}$/);
  });

  it('issue23 workload identity exchanges the federated token file at Entra ID', async () => {
    const tokenFile = path.join(dir, 'federated-token');
    await writeFile(tokenFile, federatedToken);
    expect(
      await tokenFor({ kind: 'workload-identity', tenantId, clientId: 'workload', tokenFile }),
    ).toMatch(/^entra\.workload\./);
  });
});

describe('createAzureCredential: failures name the method, the endpoint, the status and what to check', () => {
  it('issue23 a wrong secret: 401 from the token endpoint, and the secret is not in the error', async () => {
    const { message, hint } = await failureOf({
      kind: 'service-principal-secret',
      tenantId,
      clientId: 'sp-secret',
      secret: { value: `${secret}-wrong` },
    });
    expect(message).toContain('service principal (client secret)');
    expect(message).toContain(`${authority.origin}/${tenantId}/oauth2/v2.0/token`);
    expect(message).toContain('HTTP 401');
    expect(hint).toContain('client sp-secret');
  });

  it('issue23 IMDS that refuses an unknown identity: the endpoint without its query, and HTTP 400', async () => {
    const { message } = await failureOf(
      { kind: 'managed-identity', clientId: 'not-assigned' },
      { ...endpoints, imdsEndpoint: `${imds.tokenUrl}?sig=query-secret` },
    );
    expect(message).toContain(
      `managed identity (user-assigned): no token from ${imds.tokenUrl} (HTTP 400): Identity not found`,
    );
    expect(message).not.toContain('query-secret');
  });

  it('issue23 a failing IMDS is retried, then reported with its status', async () => {
    const before = imds.requests.length;
    imds.failWith({ status: 503 });
    try {
      const { message } = await failureOf({ kind: 'managed-identity' });
      expect(message).toContain('HTTP 503');
      expect(imds.requests.length - before).toBe(3);
    } finally {
      imds.failWith(undefined);
    }
  });

  it('issue23 an Entra ID that fails with 500 is reported with the status', async () => {
    authority.failWith({ status: 500 });
    try {
      const { message } = await failureOf({
        kind: 'service-principal-secret',
        tenantId,
        clientId: 'sp-secret',
        secret: { value: secret },
      });
      expect(message).toMatch(/service principal \(client secret\): no token from .*HTTP 500/);
    } finally {
      authority.failWith(undefined);
    }
  });

  it('issue23 an endpoint nobody listens on names the endpoint', async () => {
    const { message } = await failureOf(
      { kind: 'managed-identity' },
      { ...endpoints, imdsEndpoint: 'http://127.0.0.1:9/metadata/identity/oauth2/token' },
    );
    expect(message).toContain('no token from http://127.0.0.1:9/metadata/identity/oauth2/token');
  });

  it('issue23 an Arc challenge naming a file outside the token directory is refused, and nothing is sent', async () => {
    const outside = path.join(dir, 'not-a-challenge.key');
    await writeFile(outside, 'root-only-content');
    const before = arc.requests.length;
    arc.setRealm(outside);
    try {
      const { message } = await failureOf({ kind: 'arc' });
      expect(message).toContain(
        `challenge file ${outside} is not a .key file in ${endpoints.arcChallengeDir}`,
      );
      expect(arc.requests.length - before).toBe(1);
    } finally {
      arc.setRealm(undefined);
    }
  });

  it('issue23 a missing secret file names the file', async () => {
    const file = path.join(dir, 'absent-secret');
    const { message } = await failureOf({
      kind: 'service-principal-secret',
      tenantId,
      clientId: 'sp-secret',
      secret: { file },
    });
    expect(message).toContain(`cannot read ${file}`);
  });

  it.each([
    ['holds no private key', () => pki.client.certOnlyFile],
    ["holds a private key that is not the certificate's", () => pki.client.otherKeyPemFile],
  ])('issue23 a certificate file that %s is refused before any request', async (why, file) => {
    const before = authority.requests.length;
    const { message } = await failureOf({
      kind: 'service-principal-certificate',
      tenantId,
      clientId: 'sp-cert',
      certificateFile: file(),
    });
    expect(message).toContain(`${file()} ${why}`);
    expect(authority.requests.length).toBe(before);
  });

  it('issue23 a file that is neither PEM nor .pfx is refused', async () => {
    const file = path.join(dir, 'garbage.crt');
    await writeFile(file, 'not a certificate');
    const { message } = await failureOf({
      kind: 'service-principal-certificate',
      tenantId,
      clientId: 'sp-cert',
      certificateFile: file,
    });
    expect(message).toContain('is neither PEM nor a PKCS#12 file named .pfx');
  });
});
