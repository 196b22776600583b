import { createHash } from 'node:crypto';
import {
  authModeName,
  createAzureCredential,
  endpointsFromEnv,
  type AzureAuthSetting,
  type CredentialEndpoints,
} from '@aks-flex-node/azure-credential';
import { hostPaths } from '@aks-flex-node/layout';
import { formatExecCredential, readExecCredentialRequest } from './exec-credential.js';
import {
  readCachedToken,
  tokenCacheKey,
  writeCachedToken,
  type TokenCacheHost,
} from './token-cache.js';

/** What the `token` subcommands hand over: who to be, and for which server. */
export interface ExecCredentialAsk {
  readonly setting: AzureAuthSetting;
  /** The API server's Entra application id: the token's audience. */
  readonly serverId: string;
  readonly env: NodeJS.ProcessEnv;
  readonly write: (text: string) => void;
  readonly warn: (text: string) => void;
  readonly cache?: TokenCacheHost;
}

/**
 * Prints the ExecCredential for `ask`: from the token cache while its token
 * has time left, else from the token service, then kept in the cache. The
 * request is read first, so a malformed `KUBERNETES_EXEC_INFO` fails before
 * any token is asked for. Throws INVALID_ARGUMENT or CREDENTIAL_FAILED.
 */
export async function answerExecCredential(ask: ExecCredentialAsk): Promise<void> {
  const request = readExecCredentialRequest(ask.env);
  const endpoints = endpointsFromEnv(
    {
      ...ask.env,
      AKS_FLEX_NODE_AUTHORITY_HOST:
        ask.env.AKS_FLEX_NODE_AUTHORITY_HOST ?? ask.env.AZURE_AUTHORITY_HOST,
    },
    hostPaths.arcChallengeDir,
  );
  const cache = ask.cache ?? {
    dir: hostPaths.tokenCacheDir,
    euid: process.geteuid?.() ?? -1,
    now: Date.now,
  };
  const key = cacheKeyOf(ask.setting, endpoints, ask.serverId);
  const cached = await readCachedToken(cache, key);
  if (cached !== undefined) {
    ask.write(formatExecCredential(request, cached.token, cached.expiresOnTimestamp));
    return;
  }
  const credential = await createAzureCredential(ask.setting, endpoints);
  const issued = await credential.getToken(`${ask.serverId}/.default`);
  const notKept = await writeCachedToken(cache, key, issued);
  // The token is good either way; the warning says why the next call asks again.
  if (notKept !== undefined) ask.warn(`warning: ${notKept}`);
  ask.write(formatExecCredential(request, issued.token, issued.expiresOnTimestamp));
}

/** Everything that makes a different credential; the secret only as a digest. */
function cacheKeyOf(
  setting: AzureAuthSetting,
  endpoints: CredentialEndpoints,
  serverId: string,
): string {
  const base = { mode: authModeName(setting), serverId };
  switch (setting.kind) {
    case 'service-principal-secret': {
      const secret =
        'value' in setting.secret ? setting.secret.value : `file:${setting.secret.file}`;
      return tokenCacheKey({
        ...base,
        authority: endpoints.authorityHost,
        tenant: setting.tenantId,
        client: setting.clientId,
        secret: digest(secret),
      });
    }
    case 'service-principal-certificate':
      return tokenCacheKey({
        ...base,
        authority: endpoints.authorityHost,
        tenant: setting.tenantId,
        client: setting.clientId,
        certificate: setting.certificateFile,
      });
    case 'workload-identity':
      return tokenCacheKey({
        ...base,
        authority: endpoints.authorityHost,
        tenant: setting.tenantId,
        client: setting.clientId,
        tokenFile: setting.tokenFile,
      });
    case 'managed-identity':
      return tokenCacheKey({ ...base, endpoint: endpoints.imdsEndpoint, client: setting.clientId });
    case 'arc':
      return tokenCacheKey({ ...base, endpoint: endpoints.arcEndpoint });
    default: {
      const unhandled: never = setting;
      throw new Error(`unknown auth setting ${JSON.stringify(unhandled)}`);
    }
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
