import { AgentError } from '@aks-flex-node/log';

/**
 * Checks kubelogin's proof-of-possession flags as kubelogin does:
 * `--pop-claims` only with `--pop-enabled`, and with a `u=<ARM id>` claim,
 * each claim `key=value`. Well-formed flags are then refused too: this
 * release issues bearer tokens only. A PoP token is an access token bound to
 * a key the client holds, wrapped in a signed HTTP request (SHR) that names
 * the cluster; Go's kubelogin builds it with MSAL Go's custom authentication
 * scheme. MSAL Node (under @azure/identity) has no such scheme: its
 * confidential client turns a PoP request into a bearer one (msal-node 7,
 * ClientApplication.initializeBaseRequest), and building the SHR here would be
 * hand-written OAuth. The kubeconfig the Go agent writes for the kubelet
 * passes no PoP flag (test/namespace/token.test.ts lays it out); PoP is for
 * clusters reached through Azure Arc's cluster connect (docs/cli.md,
 * "Proof-of-possession tokens"). Throws INVALID_ARGUMENT.
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
    '--pop-enabled: proof-of-possession (PoP) tokens are not supported; this release issues bearer tokens only',
    "remove --pop-enabled and --pop-claims from the kubeconfig's exec args (users[].user.exec.args) to get a bearer token, which the AKS API server accepts with Entra ID; a cluster reached only through Azure Arc's cluster connect, which needs PoP, needs Go's kubelogin as the exec command instead",
  );
}

function popError(message: string, hint: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', `token kubelogin: ${message}`, { hint });
}
