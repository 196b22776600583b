import { AgentError, messageOf } from '@aks-flex-node/log';

/** The environment variable client-go passes an exec plugin its request in. */
export const execInfoEnv = 'KUBERNETES_EXEC_INFO';

const group = 'client.authentication.k8s.io';

/** The ExecCredential versions client-go speaks: kubectl 1.20 asks v1beta1, current clients v1. */
export const execCredentialVersions = [`${group}/v1`, `${group}/v1beta1`] as const;

export type ExecCredentialVersion = (typeof execCredentialVersions)[number];

/** What the caller asked for: the version to answer in, and whether it may prompt. */
export interface ExecCredentialRequest {
  readonly apiVersion: ExecCredentialVersion;
  readonly interactive: boolean;
}

/**
 * The request in `KUBERNETES_EXEC_INFO`. Unset or empty means v1, so the
 * command can be run by hand, as the Go release allows. Throws
 * INVALID_ARGUMENT for anything that is not an ExecCredential of a known
 * version.
 */
export function readExecCredentialRequest(env: NodeJS.ProcessEnv): ExecCredentialRequest {
  const text = env[execInfoEnv] ?? '';
  if (text.trim() === '') return { apiVersion: `${group}/v1`, interactive: false };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw refusal(`is not JSON: ${messageOf(error)}`);
  }
  const fields = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<
    string,
    unknown
  >;
  const { apiVersion, kind } = fields;
  if (
    kind !== 'ExecCredential' ||
    typeof apiVersion !== 'string' ||
    !apiVersion.startsWith(`${group}/`)
  ) {
    throw refusal(
      `is not a ${group} ExecCredential (kind ${String(kind)}, apiVersion ${String(apiVersion)})`,
    );
  }
  if (!isKnownVersion(apiVersion)) {
    throw refusal(
      `asks for ${apiVersion}; this plugin answers ${execCredentialVersions.join(' or ')}`,
    );
  }
  const spec = fields.spec as { interactive?: unknown } | undefined;
  return { apiVersion, interactive: spec?.interactive === true };
}

function isKnownVersion(version: string): version is ExecCredentialVersion {
  return (execCredentialVersions as readonly string[]).includes(version);
}

/**
 * The ExecCredential answering `request` with `token`, as the Go release
 * prints it: kind and apiVersion, the spec, and a status with the token and
 * its expiry in RFC 3339 whole seconds (metav1.Time), indented two spaces.
 */
export function formatExecCredential(
  request: ExecCredentialRequest,
  token: string,
  expiresOnTimestamp: number,
): string {
  const credential = {
    kind: 'ExecCredential',
    apiVersion: request.apiVersion,
    spec: { interactive: request.interactive },
    status: { expirationTimestamp: rfc3339Seconds(expiresOnTimestamp), token },
  };
  return `${JSON.stringify(credential, null, 2)}\n`;
}

function rfc3339Seconds(timestamp: number): string {
  return new Date(Math.floor(timestamp / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function refusal(why: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', `token: ${execInfoEnv} ${why}`, {
    hint: 'run this command as a client-go exec credential plugin (kubeconfig users[].user.exec), or unset the variable to get a v1 ExecCredential',
  });
}
