/**
 * `aks-flex-node token kubelogin|arc`, the kubelet's exec credential plugin,
 * run as the built executable on a private host. The token services (Entra
 * ID, a VM's IMDS, an Arc machine's identity endpoint) and the cluster's API
 * server are remote and cannot be reached from here: local stand-ins on
 * 127.0.0.1 speak their documented protocols (test/support/token-services),
 * inside the host's own network namespace. The API server checks the bearer
 * token against the tokens the stand-ins issued. Debian's kubectl 1.20
 * (v1beta1) and @kubernetes/client-node (v1) run the executable through a
 * kubeconfig laid out as the Go agent writes the kubelet's.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  facts,
  namespaceUnavailable,
  runOnPrivateHostAsync,
  type HostRun,
} from './private-host.js';

const workspace = path.resolve(import.meta.dirname, '../..');
/** Debian's kubernetes-client, unpacked by `./run` (it collides with another kubectl package). */
const debianKubectl =
  process.env.AKS_FLEX_NODE_TEST_KUBECTL ??
  '/var/cache/aks-flex-node-test/kubernetes-client/usr/bin/kubectl';
/** Node 24 runs the stand-ins' TypeScript directly. */
const node =
  Number(process.versions.node.split('.')[0]) >= 24
    ? process.execPath
    : path.join(
        workspace,
        `node_modules/node-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}/bin/node`,
      );

const secret = 'Zq8.sp-secret.never-printed';
const federatedToken = 'federated.jwt.never-printed';

const unavailable =
  namespaceUnavailable() ??
  (existsSync(debianKubectl)
    ? undefined
    : `Debian's kubectl is not at ${debianKubectl} (./run unpacks it)`);
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/token: ${unavailable}`);

// One private host for every check: the stand-ins start once, and the
// scenario prints one fact per check (CPU is shared with the other suites).
const scenario = String.raw`
ip link set lo up
# The Arc agent's challenge directory, on a tmpfs: /var/opt is this machine's.
mount -t tmpfs -o mode=0755 tmpfs /var/opt
mkdir -p /var/opt/azcmagent/tokens && chmod 0700 /var/opt/azcmagent/tokens
# On the private host's own /srv: the test's /tmp is hidden by the prelude's.
svc=/srv/token-services; mkdir -p "$svc"
printf '%s' "$CONFIG" >"$svc/config.json"
"$NODE" "$WORKSPACE/test/support/token-services/serve.ts" "$svc" "$svc/config.json" 2>"$svc/serve.err" &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do [ -s "$svc/services.json" ] && break; sleep 0.1; done
[ -s "$svc/services.json" ] || { echo "the token stand-ins did not start: $(cat "$svc/serve.err")" >&2; exit 1; }
S() { jq -r ".$1" "$svc/services.json"; }
export NODE_EXTRA_CA_CERTS=$(S caFile)
export AKS_FLEX_NODE_AUTHORITY_HOST=$(S authority) AKS_FLEX_NODE_IMDS_ENDPOINT=$(S imds) IDENTITY_ENDPOINT=$(S arc)
# The IMDS and Arc stand-ins are plain http on 127.0.0.1, as the real ones are on their own addresses.
export AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true
# The machine's copy of the agent, where the kubelet's kubeconfig names it.
cp "$BINARY" /usr/local/bin/aks-flex-node
stderr_all=$svc/all-stderr
run() { # NAME ENV=... -- ARGS...: the plugin's token, ExecCredential version, expiry, exit
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  set +e; env "${'$'}{envs[@]}" /usr/local/bin/aks-flex-node token "$@" >"$svc/$name.out" 2>"$svc/$name.err"; local code=$?; set -e
  cat "$svc/$name.err" >>"$stderr_all"
  echo "${'$'}{name}_exit=$code"
  echo "${'$'}{name}_token=$(jq -r .status.token "$svc/$name.out" 2>/dev/null)"
  echo "${'$'}{name}_apiVersion=$(jq -r .apiVersion "$svc/$name.out" 2>/dev/null)"
  echo "${'$'}{name}_expires=$(jq -r .status.expirationTimestamp "$svc/$name.out" 2>/dev/null)"
  echo "${'$'}{name}_indent=$(sed -n 2p "$svc/$name.out")"
  echo "${'$'}{name}_stderr=$(tr '\n' ' ' <"$svc/$name.err")"
}
spn=(AAD_LOGIN_METHOD=spn AZURE_TENANT_ID=tenant-1 AAD_SERVICE_PRINCIPAL_CLIENT_ID=sp-secret AAD_SERVICE_PRINCIPAL_CLIENT_SECRET=$SECRET)
run spn "${'$'}{spn[@]}" -- kubelogin --server-id 6dae42f8-4368-4678-94ff-3960e28e3630
run spnAgain "${'$'}{spn[@]}" -- kubelogin
cache=/run/aks-flex-node/token-cache
echo "cache_dirMode=$(stat -c %a "$cache")"
echo "cache_fileModes=$(stat -c %a "$cache"/*.json | sort -u | tr '\n' ' ')"
# Expiry: the cached token now has a minute left, inside the refresh margin.
entry=$(grep -l "$(jq -r .status.token "$svc/spn.out")" "$cache"/*.json)
jq ".expiresOnTimestamp = $(( $(date +%s) * 1000 + 60000 ))" "$entry" >"$entry.new" && cat "$entry.new" >"$entry" && rm "$entry.new"
run spnNearExpiry "${'$'}{spn[@]}" -- kubelogin
run spnAfterRefresh "${'$'}{spn[@]}" -- kubelogin
run v1beta1 KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"interactive":false}}' "${'$'}{spn[@]}" -- kubelogin
cp "$(S clientPemFile)" "$svc/sp-credential"
cert=(AAD_LOGIN_METHOD=spn AZURE_TENANT_ID=tenant-1 AAD_SERVICE_PRINCIPAL_CLIENT_ID=sp-cert)
run pem "${'$'}{cert[@]}" -- kubelogin --server-id 6dae42f8-4368-4678-94ff-3960e28e3630 --client-certificate-file "$svc/sp-credential"
run pfx "${'$'}{cert[@]}" AZURE_CLIENT_CERTIFICATE_PATH="$(S clientPfxFile)" -- kubelogin
run certOnly "${'$'}{cert[@]}" -- kubelogin --client-certificate-file "$(S certOnlyFile)"
run otherKey "${'$'}{cert[@]}" -- kubelogin --client-certificate-file "$(S otherKeyPemFile)"
run msi AAD_LOGIN_METHOD=msi -- kubelogin
run msiUser AAD_LOGIN_METHOD=msi AZURE_CLIENT_ID=mi-user -- kubelogin
printf '%s' "$FEDERATED" >"$svc/federated-token"
run workload AAD_LOGIN_METHOD=workloadidentity AZURE_TENANT_ID=tenant-1 AZURE_CLIENT_ID=workload AZURE_FEDERATED_TOKEN_FILE="$svc/federated-token" -- kubelogin
run arc -- arc
echo "arc_challengesLeft=$(find /var/opt/azcmagent/tokens -type f | wc -l)"
run failingImds AAD_LOGIN_METHOD=msi AKS_FLEX_NODE_IMDS_ENDPOINT="$(S failingImds)" -- kubelogin
run failingAuthority "${'$'}{spn[@]}" AKS_FLEX_NODE_AUTHORITY_HOST="$(S failingAuthority)" -- kubelogin
run wrongSecret AAD_LOGIN_METHOD=spn AZURE_TENANT_ID=tenant-1 AAD_SERVICE_PRINCIPAL_CLIENT_ID=sp-secret AAD_SERVICE_PRINCIPAL_CLIENT_SECRET="$SECRET.wrong" -- kubelogin
run pop "${'$'}{spn[@]}" -- kubelogin --pop-enabled
run popClaims "${'$'}{spn[@]}" -- kubelogin --pop-enabled --pop-claims u=/subscriptions/s/resourceGroups/r/providers/Microsoft.Kubernetes/connectedClusters/c
run badExecInfo KUBERNETES_EXEC_INFO='{"apiVersion":"v1","kind":"Pod"}' "${'$'}{spn[@]}" -- kubelogin

# The kubelet's kubeconfig as the Go agent writes it (clientcmd's encoding:
# cluster, context and user named so), EXEC_VERSION aside: kubectl 1.20 speaks v1beta1.
kubeconfig() { # OUT EXEC_VERSION NAME=VALUE...
  local out=$1 version=$2; shift 2
  {
    echo "apiVersion: v1"
    echo "clusters:"
    echo "- cluster:"
    echo "    certificate-authority-data: $(base64 -w0 "$(S caFile)")"
    echo "    server: $(S apiServer)"
    echo "  name: cluster"
    echo "contexts:"
    echo "- context:"
    echo "    cluster: cluster"
    echo "    user: user"
    echo "  name: context"
    echo "current-context: context"
    echo "kind: Config"
    echo "preferences: {}"
    echo "users:"
    echo "- name: user"
    echo "  user:"
    echo "    exec:"
    echo "      apiVersion: client.authentication.k8s.io/$version"
    echo "      args:"
    echo "      - token"
    echo "      - kubelogin"
    echo "      - --server-id"
    echo "      - 6dae42f8-4368-4678-94ff-3960e28e3630"
    echo "      command: /usr/local/bin/aks-flex-node"
    echo "      env:"
    for pair in "$@"; do
      echo "      - name: ${'$'}{pair%%=*}"
      echo "        value: ${'$'}{pair#*=}"
    done
    echo "      interactiveMode: Never"
    echo "      provideClusterInfo: false"
  } >"$out"
}
rm -rf "$cache"
kubeconfig "$svc/kubelet-v1beta1.conf" v1beta1 AAD_LOGIN_METHOD=spn AAD_SERVICE_PRINCIPAL_CLIENT_ID=sp-secret AZURE_TENANT_ID=tenant-1 AAD_SERVICE_PRINCIPAL_CLIENT_SECRET="$SECRET"
set +e
"$KUBECTL" --kubeconfig "$svc/kubelet-v1beta1.conf" get --raw /version >"$svc/kubectl.out" 2>"$svc/kubectl.err"; echo "kubectl_exit=$?"
echo "kubectl_gitVersion=$(jq -r .gitVersion "$svc/kubectl.out")"
kubeconfig "$svc/failing.conf" v1beta1 AAD_LOGIN_METHOD=msi AKS_FLEX_NODE_IMDS_ENDPOINT="$(S failingImds)"
"$KUBECTL" --kubeconfig "$svc/failing.conf" get --raw /version >/dev/null 2>"$svc/kubectl-failing.err"; echo "kubectlFailing_exit=$?"
echo "kubectlFailing_stderr=$(tr '\n' ' ' <"$svc/kubectl-failing.err")"
kubeconfig "$svc/kubelet-v1.conf" v1 AAD_LOGIN_METHOD=msi AZURE_CLIENT_ID=mi-user
"$NODE" "$WORKSPACE/test/support/token-services/client-node-version.ts" "$svc/kubelet-v1.conf" >"$svc/client-node.out" 2>"$svc/client-node.err"; echo "clientNode_exit=$?"
echo "clientNode_gitVersion=$(cat "$svc/client-node.out")"
echo "clientNode_stderr=$(tr '\n' ' ' <"$svc/client-node.err")"
set -e
cat "$svc/kubectl.err" "$svc/kubectl-failing.err" "$svc/client-node.err" "$svc/serve.err" >>"$stderr_all"
# No secret, challenge or token in anything but the credential on stdout.
leaks=$(grep -c -E "$SECRET|$FEDERATED|entra\.[a-z-]+\.[0-9]|imds\.[a-z-]+\.[0-9]|arc\.[0-9]" "$stderr_all" || true)
echo "leaks=$leaks"
echo "stderrBytes=$(wc -c <"$stderr_all")"
`;

let run: HostRun;
let seen: Record<string, string>;

beforeAll(async () => {
  if (unavailable !== undefined) return;
  const config = {
    tenantId: 'tenant-1',
    secret,
    federatedToken,
    userAssignedClientIds: ['mi-user'],
    arcChallengeDir: '/var/opt/azcmagent/tokens',
  };
  run = await runOnPrivateHostAsync(scenario, 180_000, {
    NODE: node,
    CONFIG: JSON.stringify(config),
    KUBECTL: debianKubectl,
    SECRET: secret,
    FEDERATED: federatedToken,
  });
  seen = facts(run.stdout);
}, 200_000);

describe.skipIf(unavailable !== undefined)('token kubelogin and token arc (issue 23)', () => {
  it('the private host ran every check', () => {
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(seen['stderrBytes']).toBeDefined();
  });

  it.each([
    ['a service principal with a secret', 'spn', /^entra\.sp-secret\.\d+$/],
    [
      'a service principal with a PEM certificate, detected by content',
      'pem',
      /^entra\.sp-cert\.\d+$/,
    ],
    ['a service principal with a .pfx certificate', 'pfx', /^entra\.sp-cert\.\d+$/],
    ['a system-assigned managed identity through IMDS', 'msi', /^imds\.system\.\d+$/],
    ['a user-assigned managed identity', 'msiUser', /^imds\.mi-user\.\d+$/],
    ['workload identity', 'workload', /^entra\.workload\.\d+$/],
    ["Arc's local identity endpoint (token arc)", 'arc', /^arc\.\d+$/],
  ])(
    'issue23 %s gives an ExecCredential v1 with the token and its expiry',
    (_case, name, token) => {
      expect(seen[`${name}_exit`], seen[`${name}_stderr`]).toBe('0');
      expect(seen[`${name}_token`]).toMatch(token);
      expect(seen[`${name}_apiVersion`]).toBe('client.authentication.k8s.io/v1');
      expect(Date.parse(seen[`${name}_expires`] ?? '')).toBeGreaterThan(Date.now() + 50 * 60_000);
      expect(seen[`${name}_expires`]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(seen[`${name}_indent`]).toBe('  "kind": "ExecCredential",');
      expect(seen[`${name}_stderr`]).toBe('');
    },
  );

  it("issue23 Arc's challenge file is read and answered; none is left behind", () => {
    expect(seen['arc_challengesLeft']).toBe('0');
  });

  it('issue23 KUBERNETES_EXEC_INFO asking v1beta1 is answered in v1beta1; anything else is refused', () => {
    expect(seen['v1beta1_apiVersion']).toBe('client.authentication.k8s.io/v1beta1');
    expect(seen['v1beta1_token']).toMatch(/^entra\.sp-secret\./);
    expect(seen['badExecInfo_exit']).toBe('2');
    expect(seen['badExecInfo_stderr']).toContain(
      'KUBERNETES_EXEC_INFO is not a client.authentication.k8s.io ExecCredential',
    );
  });

  it('issue23 a second call is answered from the root-only cache (0600 in 0700), without the authority', () => {
    expect(seen['spnAgain_token']).toBe(seen['spn_token']);
    expect(seen['cache_dirMode']).toBe('700');
    expect(seen['cache_fileModes']?.trim()).toBe('600');
  });

  it('issue23 a cached token within five minutes of its expiry is replaced by a fresh one, which is then cached', () => {
    expect(seen['spnNearExpiry_token']).not.toBe(seen['spn_token']);
    expect(seen['spnNearExpiry_token']).toMatch(/^entra\.sp-secret\.\d+$/);
    expect(seen['spnAfterRefresh_token']).toBe(seen['spnNearExpiry_token']);
  });

  it.each([
    [
      'a failing IMDS',
      'failingImds',
      'managed identity (system-assigned): no token from http://127.0.0.1:',
    ],
    [
      'a failing Entra ID',
      'failingAuthority',
      'service principal (client secret): no token from https://127.0.0.1:',
    ],
  ])(
    'issue23 %s: exit 1, and stderr names the credential, the endpoint and the status',
    (_case, name, names) => {
      expect(seen[`${name}_exit`]).toBe('1');
      expect(seen[`${name}_stderr`]).toContain(`error: ${names}`);
      expect(seen[`${name}_stderr`]).toContain('(HTTP 503)');
      expect(seen[`${name}_stderr`]).toMatch(/hint: check /);
    },
  );

  it('issue23 a wrong secret: exit 1 with HTTP 401 and AADSTS7000215, the secret not printed', () => {
    expect(seen['wrongSecret_exit']).toBe('1');
    expect(seen['wrongSecret_stderr']).toContain(
      '(HTTP 401): AADSTS7000215: Invalid client secret provided.',
    );
  });

  it.each([
    ['certOnly', 'holds no private key'],
    ['otherKey', "holds a private key that is not the certificate's"],
  ])(
    'issue23 a client certificate file that fails the checks (%s) is refused with its path',
    (name, why) => {
      expect(seen[`${name}_exit`]).toBe('1');
      expect(seen[`${name}_stderr`]).toMatch(
        new RegExp(`error: service principal certificate /\\S+ ${why.replace(/[()]/g, '\\$&')}`),
      );
      expect(seen[`${name}_token`]).toBe('');
    },
  );

  it('issue23 --pop-enabled without a u= claim is refused as kubelogin refuses it', () => {
    expect(seen['pop_exit']).toBe('2');
    expect(seen['pop_stderr']).toContain('--pop-enabled needs --pop-claims with u=');
  });

  it('issue23 well-formed PoP flags are refused with what is not supported and what to change (docs/cli.md)', () => {
    expect(seen['popClaims_exit']).toBe('2');
    expect(seen['popClaims_token']).toBe('');
    expect(seen['popClaims_stderr']).toContain(
      'error: token kubelogin: --pop-enabled: proof-of-possession (PoP) tokens are not supported; this release issues bearer tokens only',
    );
    expect(seen['popClaims_stderr']).toContain(
      "hint: remove --pop-enabled and --pop-claims from the kubeconfig's exec args",
    );
  });

  it("issue23 Debian's kubectl 1.20 runs the machine's copy through the kubelet's kubeconfig (v1beta1)", () => {
    expect(seen['kubectl_exit']).toBe('0');
    expect(seen['kubectl_gitVersion']).toBe('v1.35.6');
  });

  it('issue23 kubectl reports an endpoint that fails: non-zero, with the plugin error', () => {
    expect(seen['kubectlFailing_exit']).not.toBe('0');
    expect(seen['kubectlFailing_stderr']).toContain(
      'managed identity (system-assigned): no token from',
    );
    expect(seen['kubectlFailing_stderr']).toContain('HTTP 503');
  });

  it('issue23 @kubernetes/client-node runs it through the same kubeconfig with v1', () => {
    expect(seen['clientNode_exit'], seen['clientNode_stderr']).toBe('0');
    expect(seen['clientNode_gitVersion']).toBe('v1.35.6');
  });

  it('issue23 no secret, federated token, challenge or access token in any stderr or log', () => {
    expect(seen['leaks']).toBe('0');
  });
});
