import { AgentError } from '@aks-flex-node/log';

/**
 * Where the token services are. Production uses {@link defaultEndpoints};
 * `AKS_FLEX_NODE_AUTHORITY_HOST`, `AKS_FLEX_NODE_IMDS_ENDPOINT` and Arc's
 * `IDENTITY_ENDPOINT` move them (sovereign clouds, test servers).
 */
export interface CredentialEndpoints {
  /** Entra ID, as scheme and host: `https://login.microsoftonline.com`. */
  readonly authorityHost: string;
  /** The IMDS token URL of a managed identity. */
  readonly imdsEndpoint: string;
  /** The Arc agent's local identity endpoint (HIMDS) token URL. */
  readonly arcEndpoint: string;
  /** The only directory an Arc challenge file may be read from. */
  readonly arcChallengeDir: string;
  /** Whether plain-http endpoints other than the defaults are accepted (local test servers). */
  readonly allowInsecure: boolean;
}

/**
 * The endpoints of Azure's public cloud. IMDS and Arc's endpoint are plain
 * http by design: link-local and loopback, never routed.
 */
export const defaultEndpoints = {
  authorityHost: 'https://login.microsoftonline.com',
  imdsEndpoint: 'http://169.254.169.254/metadata/identity/oauth2/token',
  arcEndpoint: 'http://localhost:40342/metadata/identity/oauth2/token',
} as const;

/** The environment variables that move an endpoint, as bootstrap.sh exports them (spec/scripts.md). */
export const endpointEnv = {
  authorityHost: 'AKS_FLEX_NODE_AUTHORITY_HOST',
  imdsEndpoint: 'AKS_FLEX_NODE_IMDS_ENDPOINT',
  /** Set by the Arc agent for every process on an Arc machine; the Azure SDKs read it too. */
  arcEndpoint: 'IDENTITY_ENDPOINT',
  allowInsecure: 'AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS',
} as const;

const truthy = new Set(['true', '1', 'yes', 'y']);

/**
 * The endpoints the environment names, each checked: an https URL, the
 * default, or plain http only while `AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS`
 * is truthy (`true`, `1`, `yes`, `y`, as bootstrap.sh reads its flags).
 * Throws INVALID_ARGUMENT naming the variable and the value.
 */
export function endpointsFromEnv(
  env: NodeJS.ProcessEnv,
  arcChallengeDir: string,
): CredentialEndpoints {
  const allowInsecure = truthy.has((env[endpointEnv.allowInsecure] ?? '').trim().toLowerCase());
  const pick = (name: keyof typeof defaultEndpoints): string => {
    const value = env[endpointEnv[name]]?.trim();
    if (value === undefined || value === '') return defaultEndpoints[name];
    return checkEndpoint(endpointEnv[name], value, defaultEndpoints[name], allowInsecure);
  };
  return {
    authorityHost: pick('authorityHost').replace(/\/+$/, ''),
    imdsEndpoint: pick('imdsEndpoint'),
    arcEndpoint: pick('arcEndpoint'),
    arcChallengeDir,
    allowInsecure,
  };
}

function checkEndpoint(
  variable: string,
  value: string,
  fallback: string,
  allowInsecure: boolean,
): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch (error) {
    throw new AgentError('INVALID_ARGUMENT', `${variable} is not a URL: ${value}`, {
      path: value,
      hint: `set ${variable} to an https URL, or unset it for ${fallback}`,
      cause: error,
    });
  }
  if (url.protocol === 'https:' || value === fallback) return value;
  if (url.protocol === 'http:' && allowInsecure) return value;
  throw new AgentError(
    'INVALID_ARGUMENT',
    `${variable} is ${url.protocol.replace(/:$/, '')}, not https: ${withoutQuery(value)}`,
    {
      path: withoutQuery(value),
      hint: `use an https URL; plain http is for local test servers only, with ${endpointEnv.allowInsecure}=true`,
    },
  );
}

/** A URL as errors may print it: without its query string, which can carry a signature or a client id. */
export function withoutQuery(url: string): string {
  const at = url.search(/[?#]/);
  return at === -1 ? url : url.slice(0, at);
}
