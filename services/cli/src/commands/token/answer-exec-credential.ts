import { createAzureCredential } from '@aks-flex-node/azure-credential';
import { lookUpCachedToken, type CacheAsk } from './cached-answer.js';
import { formatExecCredential } from './exec-credential.js';
import { writeCachedToken } from './token-cache.js';

/** What the `token` subcommands hand over: who to be, for which server, where to answer and warn. */
export interface ExecCredentialAsk extends CacheAsk {
  readonly warn: (text: string) => void;
}

/**
 * Prints the ExecCredential for `ask`: from the token cache while its token
 * has time left, else from the token service, then kept in the cache.
 * Throws INVALID_ARGUMENT or CREDENTIAL_FAILED.
 */
export async function answerExecCredential(ask: ExecCredentialAsk): Promise<void> {
  const { request, endpoints, cache, key, cached } = lookUpCachedToken(ask);
  if (cached !== undefined) {
    ask.write(formatExecCredential(request, cached.token, cached.expiresOnTimestamp));
    return;
  }
  const credential = await createAzureCredential(ask.setting, endpoints);
  const issued = await credential.getToken(`${ask.serverId}/.default`);
  const notKept = writeCachedToken(cache, key, issued);
  // The token is good either way; the warning says why the next call asks again.
  if (notKept !== undefined) ask.warn(`warning: ${notKept}`);
  ask.write(formatExecCredential(request, issued.token, issued.expiresOnTimestamp));
}
