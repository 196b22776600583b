import { AgentError } from '@aks-flex-node/log';

/**
 * Checks kubelogin's proof-of-possession flags as kubelogin does:
 * `--pop-claims` only with `--pop-enabled`, and with a `u=<ARM id>` claim,
 * each claim `key=value`. A PoP token then cannot be issued by this release:
 * the Go agent writes the flags only for an Arc-connected cluster's
 * kubeconfig, which this release does not write. Throws INVALID_ARGUMENT.
 */
export function checkPopFlags(enabled: boolean, claims: string | undefined): void {
  if (!enabled) {
    if (claims !== undefined && claims !== '') {
      throw popError(
        '--pop-claims is given without --pop-enabled',
        'add --pop-enabled, or drop --pop-claims',
      );
    }
    return;
  }
  const pairs = (claims ?? '').split(',').filter((pair) => pair.trim() !== '');
  const malformed = pairs.find((pair) => !/^[^=\s]+=\S+$/.test(pair.trim()));
  if (malformed !== undefined) {
    throw popError(
      `--pop-claims has "${malformed}", not key=value`,
      'write the claims as key=value[,key=value]',
    );
  }
  if (!pairs.some((pair) => pair.trim().startsWith('u='))) {
    throw popError(
      "--pop-enabled needs --pop-claims with u=<the cluster's ARM resource id>",
      'add --pop-claims u=<cluster resource id>',
    );
  }
  throw popError(
    'proof-of-possession tokens (--pop-enabled) are not issued by this release',
    'use the bearer-token kubeconfig the agent writes (without --pop-enabled); Arc-connected clusters need the Go release for PoP',
  );
}

function popError(message: string, hint: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', `token kubelogin: ${message}`, { hint });
}
