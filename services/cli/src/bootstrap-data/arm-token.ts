import { readFile } from 'node:fs/promises';
import {
  createAzureCredential,
  endpointsFromEnv,
  TokenServiceFailure,
  type AzureAuthSetting,
} from '@aks-flex-node/azure-credential';
import { hostPaths } from '@aks-flex-node/layout';
import { AgentError, messageOf } from '@aks-flex-node/log';
import type { FetchAuth, FetchOptions, ServicePrincipalCredential } from './fetch-options.js';
import { attemptTimeoutMs } from './list-bootstrap-data.js';
import { isRetryableStatus } from './remote-error.js';

/**
 * An access token for Azure Resource Manager, as the options' identity,
 * through the one credential module (@aks-flex-node/azure-credential): IMDS
 * (AKS_FLEX_NODE_IMDS_ENDPOINT), Arc's local endpoint and its challenge file,
 * or Entra ID at --authority-host. The audience is the ARM endpoint itself,
 * as the Go agent asks, so a sovereign cloud gets its own.
 */
export async function getArmToken(options: FetchOptions, env: NodeJS.ProcessEnv): Promise<string> {
  const endpoints = {
    ...endpointsFromEnv(env, hostPaths.arcChallengeDir),
    authorityHost: options.authorityHost.href.replace(/\/+$/, ''),
  };
  const credential = await createAzureCredential(await authSetting(options.auth), endpoints);
  const scope = `${options.resourceManagerEndpoint.href.replace(/\/+$/, '')}/.default`;
  const issued = await credential
    .getToken(scope, { abortSignal: AbortSignal.timeout(attemptTimeoutMs) })
    .catch((error: unknown) => {
      throw asFetchFailure(error);
    });
  return issued.token;
}

/**
 * A token service's failure under the fetch's exit codes, which the
 * first-boot unit retries or not: a refusal (401, 403, another 4xx: the
 * identity or its secret is wrong) is REMOTE_REFUSED, permanent until the
 * settings change; no answer, throttling or a server error is
 * REMOTE_UNAVAILABLE, retried. The credential module's message (mode,
 * endpoint, status, what to check) is kept as it is.
 */
function asFetchFailure(error: unknown): unknown {
  if (!(error instanceof TokenServiceFailure)) return error;
  const retryable = error.httpStatus === undefined || isRetryableStatus(error.httpStatus);
  return new AgentError(retryable ? 'REMOTE_UNAVAILABLE' : 'REMOTE_REFUSED', error.message, {
    ...(error.path === undefined ? {} : { path: error.path }),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    cause: error,
  });
}

/** The credential module's setting for the fetch's auth flags. */
export async function authSetting(auth: FetchAuth): Promise<AzureAuthSetting> {
  switch (auth.mode) {
    case 'arc':
      return { kind: 'arc' };
    case 'msi':
      return auth.clientId === undefined
        ? { kind: 'managed-identity' }
        : { kind: 'managed-identity', clientId: auth.clientId };
    case 'service-principal': {
      const ids = { tenantId: auth.tenantId, clientId: auth.clientId };
      const credential = await resolveCredentialFile(auth.credential);
      switch (credential.kind) {
        case 'inline-secret':
          return { kind: 'service-principal-secret', ...ids, secret: { value: credential.secret } };
        case 'secret-file':
          return { kind: 'service-principal-secret', ...ids, secret: { file: credential.path } };
        case 'certificate-file':
          return {
            kind: 'service-principal-certificate',
            ...ids,
            certificateFile: credential.path,
          };
        default: {
          const unhandled: never = credential;
          throw new Error(`unknown credential ${JSON.stringify(unhandled)}`);
        }
      }
    }
    default: {
      const unhandled: never = auth;
      throw new Error(`unknown auth ${JSON.stringify(unhandled)}`);
    }
  }
}

type ResolvedCredential = Exclude<ServicePrincipalCredential, { kind: 'credential-file' }>;

/**
 * --sp-client-credential-file is a secret or a certificate, told by its
 * content as the Go agent tells it: PEM armour, or bytes that are not UTF-8
 * text (PKCS#12), mean a certificate. bootstrap.sh passes the config's
 * `clientSecretFile` this way, which the Go releases use for both.
 */
async function resolveCredentialFile(
  credential: ServicePrincipalCredential,
): Promise<ResolvedCredential> {
  if (credential.kind !== 'credential-file') return credential;
  let bytes: Buffer;
  try {
    bytes = await readFile(credential.path);
  } catch (error) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: cannot read the service-principal credential file ${credential.path}: ${messageOf(error)}`,
      {
        path: credential.path,
        cause: error,
        hint: `check that ${credential.path} exists and root can read it`,
      },
    );
  }
  const text = bytes.toString('utf8');
  const isCertificate =
    /-----BEGIN (CERTIFICATE|PRIVATE KEY|RSA PRIVATE KEY|EC PRIVATE KEY)-----/.test(text) ||
    !Buffer.from(text, 'utf8').equals(bytes);
  return { kind: isCertificate ? 'certificate-file' : 'secret-file', path: credential.path };
}
