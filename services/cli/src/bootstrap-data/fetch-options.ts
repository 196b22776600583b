import { AgentError } from '@aks-flex-node/log';

/** The ARM endpoint and Entra ID authority the Go agent defaults to. */
export const defaultResourceManagerEndpoint = 'https://management.azure.com';
export const defaultAuthorityHost = 'https://login.microsoftonline.com';
/** The listBootstrapData API version the Go agent calls (spec/scripts.md 3.2). */
export const defaultBootstrapDataApiVersion = '2026-05-02-preview';

/** Which Azure identity the fetch authenticates as. */
export type FetchAuth =
  | { mode: 'arc' }
  | { mode: 'msi'; clientId: string | undefined }
  | {
      mode: 'service-principal';
      tenantId: string;
      clientId: string;
      credential: ServicePrincipalCredential;
    };

/**
 * The one credential of a service principal: a secret file, a PEM or PKCS#12
 * certificate file, a file whose kind is told by its content, or the inline
 * secret from AKS_FLEX_NODE_SP_CLIENT_SECRET.
 */
export type ServicePrincipalCredential =
  | { kind: 'secret-file'; path: string }
  | { kind: 'certificate-file'; path: string }
  | { kind: 'credential-file'; path: string }
  | { kind: 'inline-secret'; secret: string };

/** The target AKS managed cluster, from --cluster-resource-id. */
export interface ClusterId {
  readonly resourceId: string;
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly name: string;
}

/** `fetch-bootstrap-data`'s settings, each default applied and each value checked. */
export interface FetchOptions {
  readonly cluster: ClusterId;
  readonly agentPoolName: string;
  readonly auth: FetchAuth;
  readonly resourceManagerEndpoint: URL;
  readonly authorityHost: URL;
  readonly apiVersion: string;
  readonly output: string;
  /** AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS: plain-http endpoints, for tests only. */
  readonly allowInsecureEndpoints: boolean;
}

const clusterIdPattern =
  /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.ContainerService\/managedClusters\/([^/]+)$/i;
const poolNamePattern = /^[A-Za-z0-9-]+$/;
const apiVersionPattern = /^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$/;

/** Whether an AKS_FLEX_NODE_* switch is on: true, 1, yes or y, in any case (as bootstrap.sh reads it). */
export function isTruthy(value: string | undefined): boolean {
  return ['true', '1', 'yes', 'y'].includes((value ?? '').trim().toLowerCase());
}

/** Parses --cluster-resource-id; throws INVALID_ARGUMENT unless it names an AKS managed cluster. */
export function parseClusterId(resourceId: string): ClusterId {
  const match = clusterIdPattern.exec(resourceId);
  if (match === null) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: --cluster-resource-id ${resourceId} is not an AKS managed cluster's resource ID`,
      {
        path: resourceId,
        hint: 'give /subscriptions/SUB/resourceGroups/RG/providers/Microsoft.ContainerService/managedClusters/NAME (`az aks show --query id`)',
      },
    );
  }
  const [, subscriptionId = '', resourceGroup = '', name = ''] = match;
  return { resourceId, subscriptionId, resourceGroup, name };
}

/** Checks --agent-pool-name; throws INVALID_ARGUMENT naming it. */
export function checkAgentPoolName(name: string): string {
  if (!poolNamePattern.test(name)) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: --agent-pool-name ${JSON.stringify(name)} may hold only letters, digits and dashes`,
      { path: name, hint: 'give the Flex agent pool name as `az aks nodepool list` shows it' },
    );
  }
  return name;
}

/** Checks --api-version (YYYY-MM-DD or YYYY-MM-DD-preview); throws INVALID_ARGUMENT. */
export function checkApiVersion(version: string): string {
  if (!apiVersionPattern.test(version)) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: --api-version ${JSON.stringify(version)} is not YYYY-MM-DD or YYYY-MM-DD-preview`,
      { path: version, hint: `leave it out for the default ${defaultBootstrapDataApiVersion}` },
    );
  }
  return version;
}

/**
 * Parses an endpoint flag: an absolute https URL with no user info, query or
 * fragment. Plain http is accepted only with `allowInsecure`
 * (AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS), as the Go agent accepts it
 * for its tests; a token must never cross the network in clear otherwise.
 */
export function parseEndpoint(flag: string, value: string, allowInsecure: boolean): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const secure = url?.protocol === 'https:' || (allowInsecure && url?.protocol === 'http:');
  if (
    url === undefined ||
    !secure ||
    url.host === '' ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `fetch-bootstrap-data: ${flag} ${value} is not an absolute https URL without credentials or query`,
      {
        path: value,
        hint: allowInsecure
          ? `give an http or https URL such as ${defaultResourceManagerEndpoint}`
          : `give an https URL such as ${defaultResourceManagerEndpoint}; plain http is only for tests (AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true)`,
      },
    );
  }
  return url;
}
