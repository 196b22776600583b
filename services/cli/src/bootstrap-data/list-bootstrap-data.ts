import { AgentError } from '@aks-flex-node/log';
import type { FetchOptions } from './fetch-options.js';
import { httpStatusError, networkError, type RemoteCall } from './remote-error.js';
import { readLimitedBody } from './read-limited-body.js';

/** The largest answer taken, as the Go agent limits it: join data is a few kilobytes. */
export const maxBootstrapDataBytes = 16 << 20;
/** One attempt's deadline; the first-boot unit retries a timed-out one. */
export const attemptTimeoutMs = 120_000;
/** A bootstrap token as Kubernetes defines it: `[a-z0-9]{6}.[a-z0-9]{16}`. */
const bootstrapTokenPattern = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;

/** The join data AKS returned: the JSON object as sent, to be merged over the config. */
export type BootstrapData = Record<string, unknown>;

/** What listBootstrapData needs besides the options; tests pass their own fetch. */
export interface ListDeps {
  readonly fetch: typeof fetch;
}

/** The listBootstrapData action's URL for the options' cluster and pool. */
export function listBootstrapDataUrl(options: FetchOptions): URL {
  const { cluster } = options;
  const base = options.resourceManagerEndpoint.href.replace(/\/+$/, '');
  const url = new URL(
    `${base}/subscriptions/${encodeURIComponent(cluster.subscriptionId)}` +
      `/resourceGroups/${encodeURIComponent(cluster.resourceGroup)}` +
      `/providers/Microsoft.ContainerService/managedClusters/${encodeURIComponent(cluster.name)}` +
      `/agentPools/${encodeURIComponent(options.agentPoolName)}/listBootstrapData`,
  );
  url.searchParams.set('api-version', options.apiVersion);
  return url;
}

/**
 * Calls the AKS resource provider's listBootstrapData action with an ARM
 * token and returns the join data. Throws REMOTE_UNAVAILABLE (network,
 * 408, 429, 5xx, or an answer without a bootstrap token) or REMOTE_REFUSED
 * (any other status), never with the token in the message.
 */
export async function listBootstrapData(
  options: FetchOptions,
  armToken: string,
  deps: ListDeps,
): Promise<BootstrapData> {
  const url = listBootstrapDataUrl(options);
  const call: RemoteCall = { what: 'list bootstrap data', authMode: options.auth.mode, url };
  let response: Response;
  try {
    response = await deps.fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${armToken}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: '{}',
      // A redirect could carry the bearer token to another host; ARM never redirects this call.
      redirect: 'manual',
      signal: AbortSignal.timeout(attemptTimeoutMs),
    });
  } catch (error) {
    throw networkError(call, error);
  }
  const body = await readBody(call, response);
  if (response.status < 200 || response.status > 299) {
    throw httpStatusError(call, response.status, armErrorDetail(body), hintFor(options, response));
  }
  return parseBootstrapData(call, body);
}

async function readBody(call: RemoteCall, response: Response): Promise<string> {
  try {
    return await readLimitedBody(response, maxBootstrapDataBytes);
  } catch (error) {
    throw networkError(call, error);
  }
}

function parseBootstrapData(call: RemoteCall, body: string): BootstrapData {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    data = undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw invalidAnswer(call, 'is not a JSON object');
  }
  const token = tokenOf(data);
  if (token === undefined) throw invalidAnswer(call, 'holds no azure.bootstrapToken.token');
  if (!bootstrapTokenPattern.test(token)) {
    throw invalidAnswer(call, 'holds a bootstrap token that is not [a-z0-9]{6}.[a-z0-9]{16}');
  }
  return data as BootstrapData;
}

function tokenOf(data: object): string | undefined {
  const azure = (data as { azure?: unknown }).azure;
  if (typeof azure !== 'object' || azure === null) return undefined;
  const bootstrapToken = (azure as { bootstrapToken?: unknown }).bootstrapToken;
  if (typeof bootstrapToken !== 'object' || bootstrapToken === null) return undefined;
  const token = (bootstrapToken as { token?: unknown }).token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

// A broken answer is the service's fault and may pass: retryable, like a 5xx.
function invalidAnswer(call: RemoteCall, what: string): AgentError {
  return new AgentError(
    'REMOTE_UNAVAILABLE',
    `${call.what}: the answer of ${call.url.origin}${call.url.pathname} (auth ${call.authMode}) ${what}`,
    {
      path: `${call.url.origin}${call.url.pathname}`,
      hint: 'check that --resource-manager-endpoint names Azure Resource Manager; the first-boot unit retries by itself',
    },
  );
}

// ARM's error shape: {"error":{"code":"...","message":"..."}}. Its code and
// message name no secret and say what ARM objected to; cut to one line.
function armErrorDetail(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = parsed.error ?? {};
    const parts = [code, message].filter((part) => typeof part === 'string' && part !== '');
    if (parts.length === 0) return undefined;
    return parts.join(': ').replace(/\s+/g, ' ').slice(0, 300);
  } catch {
    return undefined;
  }
}

function hintFor(options: FetchOptions, response: Response): string {
  const { cluster, agentPoolName } = options;
  const identity = identityName(options);
  switch (response.status) {
    case 401:
      return `check that ${identity} authenticates in the cloud of ${options.resourceManagerEndpoint.origin} (--authority-host, tenant) and that its token is for that endpoint`;
    case 403:
      return `grant ${identity} a role on ${cluster.resourceId} that allows Microsoft.ContainerService/managedClusters/agentPools/listBootstrapData/action`;
    case 404:
      return `check that cluster ${cluster.resourceId} has the agent pool ${agentPoolName} and that the RP knows api-version ${options.apiVersion}`;
    case 429: {
      const after = response.headers.get('retry-after');
      return `AKS throttles listBootstrapData${after === null ? '' : `; retry after ${after} s`}; the first-boot unit retries by itself`;
    }
    default:
      return response.status >= 500 || response.status === 408
        ? 'AKS or Azure Resource Manager failed for now; the first-boot unit retries by itself'
        : `check --cluster-resource-id, --agent-pool-name and --api-version ${options.apiVersion}`;
  }
}

function identityName(options: FetchOptions): string {
  const { auth } = options;
  switch (auth.mode) {
    case 'arc':
      return "the Arc machine's managed identity";
    case 'msi':
      return auth.clientId === undefined
        ? "the VM's managed identity"
        : `the managed identity ${auth.clientId}`;
    case 'service-principal':
      return `the service principal ${auth.clientId}`;
    default: {
      const unhandled: never = auth;
      return String(unhandled);
    }
  }
}
