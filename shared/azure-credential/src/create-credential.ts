import { readFile } from 'node:fs/promises';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { arcToken } from './arc-credential.js';
import { authModeName, type AzureAuthSetting } from './auth-setting.js';
import { readClientCertificate } from './client-certificate.js';
import { credentialFailure, type FailureContext } from './credential-failure.js';
import type { CredentialEndpoints } from './endpoints.js';
import { createEntraCredential, type EntraFlow } from './entra-credential.js';
import { imdsToken } from './imds-credential.js';
import type { IssuedToken } from './token-response.js';

/**
 * A credential made from an auth setting. It has the shape of
 * @azure/identity's TokenCredential, so SDK clients take it, but it never
 * answers null: every failure is CREDENTIAL_FAILED naming {@link mode}, the
 * endpoint without its query, the HTTP status and what to check, and never a
 * secret.
 */
export interface AzureCredential {
  /** The login method, for messages: "service principal (client secret)". */
  readonly mode: string;
  /** The token service this credential asks, without query string. */
  readonly endpoint: string;
  getToken(
    scopes: string | string[],
    options?: { abortSignal?: AbortSignal | undefined },
  ): Promise<IssuedToken>;
}

/**
 * The credential for `setting`. Secret and certificate files are read and
 * checked here, so a bad file fails before any request. Throws
 * CREDENTIAL_FAILED naming the file.
 */
export async function createAzureCredential(
  setting: AzureAuthSetting,
  endpoints: CredentialEndpoints,
): Promise<AzureCredential> {
  const mode = authModeName(setting);
  switch (setting.kind) {
    case 'managed-identity': {
      const context = failureContext(
        mode,
        endpoints.imdsEndpoint,
        checkManagedIdentity(setting.clientId),
        [],
      );
      return {
        mode,
        endpoint: context.endpoint,
        getToken: (scopes, options) =>
          imdsToken(
            endpoints.imdsEndpoint,
            setting.clientId,
            firstScope(scopes),
            context,
            options?.abortSignal,
          ),
      };
    }
    case 'arc': {
      const context = failureContext(mode, endpoints.arcEndpoint, checkArc, []);
      return {
        mode,
        endpoint: context.endpoint,
        getToken: (scopes, options) =>
          arcToken(
            endpoints.arcEndpoint,
            endpoints.arcChallengeDir,
            firstScope(scopes),
            context,
            options?.abortSignal,
          ),
      };
    }
    case 'service-principal-secret': {
      const secret =
        'value' in setting.secret
          ? setting.secret.value
          : await readSecretFile(mode, setting.secret.file);
      if (secret === '') throw emptySecret(mode);
      return entraCredential(
        mode,
        { kind: 'secret', ...ids(setting), secret },
        [secret],
        endpoints,
      );
    }
    case 'service-principal-certificate': {
      const pem = await readClientCertificate(setting.certificateFile);
      return entraCredential(mode, { kind: 'certificate', ...ids(setting), pem }, [], endpoints);
    }
    case 'workload-identity': {
      const federated = await readSecretFile(mode, setting.tokenFile);
      const flow: EntraFlow = { kind: 'workload', ...ids(setting), tokenFile: setting.tokenFile };
      return entraCredential(mode, flow, [federated], endpoints);
    }
    default: {
      const unhandled: never = setting;
      throw new Error(`unknown auth setting ${JSON.stringify(unhandled)}`);
    }
  }
}

async function entraCredential(
  mode: string,
  flow: EntraFlow,
  secrets: string[],
  endpoints: CredentialEndpoints,
): Promise<AzureCredential> {
  const endpoint = `${endpoints.authorityHost}/${flow.tenantId}/oauth2/v2.0/token`;
  const context = failureContext(mode, endpoint, checkEntra(flow), secrets);
  const sdk = await createEntraCredential(flow, endpoints);
  // Each call starts clean, so a failure is reported with its own answer.
  return {
    mode,
    endpoint,
    getToken: async (scopes, options) => {
      const failedBefore = sdk.lastFailedAnswer();
      try {
        const signal = options?.abortSignal;
        const token = await sdk.credential.getToken(
          scopes,
          signal === undefined ? {} : { abortSignal: signal },
        );
        if (token === null) throw new Error('the credential returned no token');
        return { token: token.token, expiresOnTimestamp: token.expiresOnTimestamp };
      } catch (error) {
        const failed = sdk.lastFailedAnswer();
        const answer = failed === failedBefore ? undefined : failed;
        throw credentialFailure(
          answer === undefined ? context : { ...context, endpoint: answer.url },
          error,
          answer?.status,
        );
      }
    },
  };
}

function ids(setting: { tenantId: string; clientId: string }): {
  tenantId: string;
  clientId: string;
} {
  return { tenantId: setting.tenantId, clientId: setting.clientId };
}

function firstScope(scopes: string | string[]): string {
  const scope = Array.isArray(scopes) ? scopes[0] : scopes;
  if (scope === undefined || scope === '') throw new Error('a token request needs a scope');
  return scope;
}

function failureContext(
  mode: string,
  endpoint: string,
  check: string,
  secrets: string[],
): FailureContext {
  return { mode, endpoint, check, secrets };
}

/** A secret or federated-token file's contents, without the trailing newline editors add. */
async function readSecretFile(mode: string, file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new AgentError('CREDENTIAL_FAILED', `${mode}: cannot read ${file}: ${messageOf(error)}`, {
      path: file,
      hint: `check that ${file} exists and root can read it`,
      cause: error,
    });
  }
  const value = text.replace(/\r?\n$/, '');
  if (value.trim() === '') {
    throw new AgentError('CREDENTIAL_FAILED', `${mode}: ${file} is empty`, {
      path: file,
      hint: `write the value into ${file}`,
    });
  }
  return value;
}

function emptySecret(mode: string): AgentError {
  return new AgentError('CREDENTIAL_FAILED', `${mode}: the client secret is empty`, {
    hint: 'set AKS_FLEX_NODE_SP_CLIENT_SECRET or give a secret file',
  });
}

function checkEntra(flow: EntraFlow): string {
  const who = `tenant ${flow.tenantId}, client ${flow.clientId}`;
  switch (flow.kind) {
    case 'secret':
      return `check the service principal (${who}) and its secret, and that the authority host reaches Entra ID`;
    case 'certificate':
      return `check that the certificate is registered on the service principal (${who}), and that the authority host reaches Entra ID`;
    case 'workload':
      return `check the federated token file and the federated credential of ${who}`;
    default: {
      const unhandled: never = flow;
      throw new Error(`unknown Entra flow ${JSON.stringify(unhandled)}`);
    }
  }
}

function checkManagedIdentity(clientId: string | undefined): string {
  const which =
    clientId === undefined
      ? 'a system-assigned identity'
      : `the identity with client id ${clientId}`;
  return `check that the VM has ${which} assigned and that IMDS answers (AKS_FLEX_NODE_IMDS_ENDPOINT)`;
}

const checkArc =
  'check that the machine is connected to Azure Arc (azcmagent show) and that himdsd is running';
