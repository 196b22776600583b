import {
  authModeName,
  endpointsFromEnv,
  type AzureAuthSetting,
  type CredentialEndpoints,
} from '@aks-flex-node/azure-credential';
import { hostPaths } from '@aks-flex-node/layout';
import {
  formatExecCredential,
  readExecCredentialRequest,
  type ExecCredentialRequest,
} from './exec-credential.js';
import { sha256Hex } from './sha256.js';
import {
  readCachedToken,
  tokenCacheKey,
  type CachedToken,
  type TokenCacheHost,
} from './token-cache.js';

/** Who to be, for which server, and where to answer: what both token paths take. */
export interface CacheAsk {
  readonly setting: AzureAuthSetting;
  /** The API server's Entra application id: the token's audience. */
  readonly serverId: string;
  readonly env: NodeJS.ProcessEnv;
  readonly write: (text: string) => void;
  readonly cache?: TokenCacheHost;
}

/** An ask looked up in the cache: what a miss needs to ask for a token and keep it. */
export interface CacheLookup {
  readonly request: ExecCredentialRequest;
  readonly endpoints: CredentialEndpoints;
  readonly cache: TokenCacheHost;
  readonly key: string;
  /** The cached token with time left, or undefined on a miss. */
  readonly cached: CachedToken | undefined;
}

/**
 * Looks `ask` up in the token cache. The request is read first, so a
 * malformed `KUBERNETES_EXEC_INFO` fails before any token is looked for.
 * Throws INVALID_ARGUMENT.
 */
export function lookUpCachedToken(ask: CacheAsk): CacheLookup {
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
  return { request, endpoints, cache, key, cached: readCachedToken(cache, key) };
}

/** Writes the ExecCredential from the cache and returns true, or returns false on a miss. */
export function answerFromCache(ask: CacheAsk): boolean {
  const { request, cached } = lookUpCachedToken(ask);
  if (cached === undefined) return false;
  ask.write(formatExecCredential(request, cached.token, cached.expiresOnTimestamp));
  return true;
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
        secret: sha256Hex(secret),
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
