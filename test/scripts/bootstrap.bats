#!/usr/bin/env bats
# scripts/bootstrap.sh (spec scripts 3, test cases 8.3), run as root on a
# private host (see test_helper.bash) with a stub agent served from a file://
# release archive named as the Go releases name it. Test names carry the spec
# case number. The cases that fetch bootstrap data run the product's own
# fetch-bootstrap-data (dist/aks-flex-node) against local stand-ins for Entra
# ID, IMDS, Arc's identity endpoint and Azure Resource Manager: remote services
# that cannot be reached from here (test/support/azure-services-main.ts).

bats_require_minimum_version 1.5.0
load test_helper

setup_file() {
  build_azure_services
}

setup() {
  setup_private_host
  make_fake_bin
  fake_systemctl
  bootstrap_sh="${workspace:?}/scripts/bootstrap.sh"
  archive=$(make_agent_archive "stub agent")
  release_dir=$(dirname "$archive")
  sha=$(sha256sum "$archive" | cut -d' ' -f1)
  base="$BATS_TEST_TMPDIR/base-config.json"
  # A base config as a generated script or the Ignition template carries it.
  cat >"$base" <<'JSON'
{"azure":{"subscriptionId":"00000000-0000-0000-0000-000000000001","tenantId":"base-tenant","resourceManagerEndpoint":"https://management.azure.com","targetCluster":{"resourceId":"/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/base-cluster","location":"eastus"},"targetAgentPoolName":"basepool","arc":{"enabled":true,"resourceGroup":"rg"}},"agent":{"logLevel":"info","logDir":"/var/log/aks-flex-node"},"node":{"labels":{"base":"true"},"kubelet":{"bootstrapToken":"base01.0123456789abcdef"}},"components":{"kubernetes":"1.35.5","containerd":"2.1.4","runc":"1.3.0"},"networking":{"cniVersion":"1.6.2","dnsServiceIP":"10.0.0.10"}}
JSON
  chmod 0600 "$base"
  config=/etc/aks-flex-node/config.json
}

teardown() {
  teardown_private_host
}

# Runs bootstrap.sh with the base config file, the archive by a URL with
# placeholders, and its digest; extra environment as NAME=VALUE before `--`.
run_bootstrap() { # [NAME=VALUE...] -- [options...]
  local envs=()
  while [[ $# -gt 0 && "$1" != -- ]]; do
    envs+=("$1")
    shift
  done
  [[ "${1:-}" != -- ]] || shift
  run env AKS_FLEX_NODE_BASE_CONFIG_FILE="$base" "${envs[@]}" bash "$bootstrap_sh" \
    --agent-url "file://$release_dir/{{ARCHIVE_NAME}}" --agent-sha256 "$sha" "$@"
}

cfg() { # JQ-FILTER
  jq -c "$1" "$config"
}

agent_ran_from() { # DIR: every recorded call ran DIR/aks-flex-node
  [ -s "$CALLS" ]
  ! grep -v -e "^$1/aks-flex-node " -e "^systemctl " "$CALLS"
}

cluster_id=/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/cluster
fresh_token=fresh1.0123456789abcdef
# What AKS answers for the pool: a fresh token, the version, and a stale CNI version.
fetched='{"azure":{"bootstrapToken":{"token":"fresh1.0123456789abcdef"}},"components":{"kubernetes":"1.35.6"},"networking":{"dnsServiceIP":"10.0.0.10","cniVersion":"stale-cni"}}'

# Starts the local Azure services for the pool aksflexnodes of $cluster_id:
# IMDS with a system identity and the user-assigned cli-msi, an Arc endpoint,
# Entra ID knowing base-sp-client (secret base-sp-secret) and cert-client
# (the certificate in $BATS_TEST_TMPDIR/leaf.pem, when there is one), and
# ARM accepting their tokens. EXTRA (JSON) is merged into the ARM's config.
serve_azure() { # [EXTRA-ARM-JSON]
  local clients='[{"clientId":"base-sp-client","secret":"base-sp-secret"}]' extra=${1:-'{}'}
  if [[ -e "$BATS_TEST_TMPDIR/leaf.pem" ]]; then
    clients=$(jq -c --arg f "$BATS_TEST_TMPDIR/leaf.pem" '. + [{clientId: "cert-client", certificateFile: $f}]' <<<"$clients")
  fi
  start_azure_services "$(jq -n --arg c "$cluster_id" --argjson r "$fetched" --argjson cl "$clients" \
    --argjson extra "$extra" '{tenantId: "base-tenant", clients: $cl,
      imds: {userAssignedClientIds: ["cli-msi"]},
      arm: ({clusterResourceId: $c, agentPoolName: "aksflexnodes", validTokens: "^(imds|arc|entra)[.]",
        response: $r} + $extra)}')"
  # What the fetch needs besides the settings: the product, and the services' endpoints.
  fetch_env=(PRODUCT_AGENT="$workspace/dist/aks-flex-node" AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true
    AKS_FLEX_NODE_IMDS_ENDPOINT="$IMDS_URL" AKS_FLEX_NODE_AUTHORITY_HOST="$AUTHORITY_URL" IDENTITY_ENDPOINT="$ARC_URL")
}

fetched_token_nowhere_else() { # the token is in the 0600 config only, never in the output
  [ "$(cfg .azure.bootstrapToken.token)" = "\"$fresh_token\"" ]
  [ "$(stat -c '%a %U' "$config")" = "600 root" ]
  [[ "$output" != *"$fresh_token"* ]]
  ! grep -rqs "$fresh_token" "$BATS_TEST_TMPDIR/azure/log" "$CALLS"
}

@test "scripts#8.3 preconditions: bootstrap.sh parses and has the exact readonly HOST_ROOT line" {
  run -0 bash -n "$bootstrap_sh"
  run -0 grep -cx 'readonly HOST_ROOT="/opt/unbounded/agent"' "$bootstrap_sh"
  [ "$output" = 1 ]
}

@test "scripts#8.3.1 precedence with MSI: CLI over environment over base; settings never reach the agent" {
  AGENT_HAS_PREFLIGHT=1 run_bootstrap \
    AKS_FLEX_NODE_AUTH=service-principal AKS_FLEX_NODE_SP_CLIENT_ID=env-client \
    AKS_FLEX_NODE_SP_CLIENT_SECRET=env-secret-value \
    AKS_FLEX_NODE_BOOTSTRAP_OCI_IMAGE=env.example/bootstrap:1 \
    AKS_FLEX_NODE_BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE=/opt/unbounded/artifacts/env \
    AKS_FLEX_NODE_CONFIG_OVERRIDES='{"node":{"labels":{"environment":"true"}}}' -- \
    --auth msi --msi-client-id cli-msi --bootstrap-oci-image cli.example/bootstrap:2 \
    --config-overrides '{"node":{"labels":{"cli":"true"}},"bootstrap":{"offlineArtifacts":{"source":"/cli/ignored"}}}' \
    --config-path "$config"
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.managedIdentity)" = '{"clientId":"cli-msi"}' ]
  [ "$(cfg .azure.servicePrincipal)" = null ]
  [ "$(cfg .azure.arc.enabled)" = false ]
  [ "$(cfg .bootstrap.ociImage)" = '"cli.example/bootstrap:2"' ]
  [ "$(cfg .bootstrap.offlineArtifacts.source)" = '"/opt/unbounded/artifacts/env"' ]
  [ "$(cfg .node.labels)" = '{"base":"true","environment":"true","cli":"true"}' ]
  [ "$(cfg '.agent.nodeName | length > 0')" = true ]
  [ "$(stat -c '%a %U' "$config")" = "600 root" ]
  [[ "$output" != *env-secret-value* ]]
  grep -qx "/usr/local/bin/aks-flex-node preflight --config $config --output text" "$CALLS"
  grep -qx "/usr/local/bin/aks-flex-node start --config $config" "$CALLS"
}

@test "scripts#8.3.2 arc + fetch: Arc's challenge answered, the token merged, arc enabled; every call runs /usr/local/bin" {
  serve_azure
  run_bootstrap "${fetch_env[@]}" -- --auth arc --fetch-bootstrap-data \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.arc.enabled)" = true ]
  [ "$(cfg '.azure.managedIdentity, .azure.servicePrincipal')" = "$(printf 'null\nnull')" ]
  fetched_token_nowhere_else
  grep -q "^/usr/local/bin/aks-flex-node fetch-bootstrap-data .*--auth arc " "$CALLS"
  agent_ran_from /usr/local/bin
  # The Arc endpoint's challenge file was read and removed.
  [ -z "$(ls -A /var/opt/azcmagent/tokens)" ]
}

@test "scripts#8.3.2 arc auth without the fetch: arc enabled, no MI or SP; every call runs /usr/local/bin" {
  run_bootstrap -- --auth ARC --agent-pool-name aksflexnodes
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.arc)" = '{"enabled":true,"resourceGroup":"rg"}' ]
  [ "$(cfg '.azure.managedIdentity, .azure.servicePrincipal')" = "$(printf 'null\nnull')" ]
  [ "$(cfg .azure.targetAgentPoolName)" = '"aksflexnodes"' ]
  agent_ran_from /usr/local/bin
}

@test "scripts#8.3.3 service principal with a secret file from the CLI: the SP is replaced exactly" {
  printf 's"e\\cret\n' >"$BATS_TEST_TMPDIR/sp-secret"
  chmod 0600 "$BATS_TEST_TMPDIR/sp-secret"
  run_bootstrap -- --auth service-principal --sp-client-id cli-client \
    --sp-client-secret-file "$BATS_TEST_TMPDIR/sp-secret"
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.servicePrincipal)" = "{\"tenantId\":\"base-tenant\",\"clientId\":\"cli-client\",\"clientSecretFile\":\"$BATS_TEST_TMPDIR/sp-secret\"}" ]
  [ "$(cfg .azure.managedIdentity)" = null ]
  [ "$(cfg .azure.arc.enabled)" = false ]
  [[ "$output" != *'e\cret'* ]]
}

@test "scripts#8.3.4 service principal with an inline secret from the environment: in the 0600 config, never logged" {
  run_bootstrap AKS_FLEX_NODE_SP_CLIENT_SECRET=$'inline-secret\r\n' -- --auth sp --sp-client-id inline-client
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.servicePrincipal)" = '{"tenantId":"base-tenant","clientId":"inline-client","clientSecret":"inline-secret"}' ]
  [ "$(stat -c '%a' "$config")" = 600 ]
  [[ "$output" != *inline-secret* ]]
  run ! grep -q inline-secret "$CALLS"
}

@test "scripts#8.3.5 a symlinked secret file is refused (65) before anything is downloaded or installed" {
  printf 'secret\n' >"$BATS_TEST_TMPDIR/sp-secret"
  chmod 0600 "$BATS_TEST_TMPDIR/sp-secret"
  ln -s "$BATS_TEST_TMPDIR/sp-secret" "$BATS_TEST_TMPDIR/sp-secret-link"
  run_bootstrap -- --auth sp --sp-client-id c --sp-client-secret-file "$BATS_TEST_TMPDIR/sp-secret-link"
  [ "$status" -eq 65 ]
  [[ "$output" == *"client-secret file must not be a symlink"* ]]
  [ ! -e /usr/local/bin/aks-flex-node ] && [ ! -e "$config" ]
  chmod 0640 "$BATS_TEST_TMPDIR/sp-secret"
  run_bootstrap -- --auth sp --sp-client-id c --sp-client-secret-file "$BATS_TEST_TMPDIR/sp-secret"
  [ "$status" -eq 65 ]
  [[ "$output" == *"must not be accessible by group or other users"* ]]
}

@test "scripts#8.3.6 fetch with MSI: the explicit target wins over env and overrides; offline drops stale versions" {
  serve_azure
  run_bootstrap "${fetch_env[@]}" AKS_FLEX_NODE_CLUSTER_RESOURCE_ID=/wrong/env/cluster \
    AKS_FLEX_NODE_AGENT_POOL_NAME=wrongenvpool AKS_FLEX_NODE_BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE=/opt/unbounded/artifacts -- \
    --fetch-bootstrap-data --auth msi --cluster-resource-id "$cluster_id" \
    --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL" \
    --config-overrides '{"azure":{"targetCluster":{"resourceId":"/wrong/override"},"targetAgentPoolName":"wrongoverride"},"node":{"labels":{"fresh":"true"}}}'
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.targetCluster)" = "{\"resourceId\":\"$cluster_id\",\"location\":\"eastus\"}" ]
  [ "$(cfg .azure.targetAgentPoolName)" = '"aksflexnodes"' ]
  [ "$(cfg .azure.resourceManagerEndpoint)" = "\"$ARM_URL\"" ]
  [ "$(cfg .azure.managedIdentity)" = '{}' ]
  [ "$(cfg .components)" = '{"kubernetes":"1.35.6"}' ]
  [ "$(cfg .networking)" = '{"dnsServiceIP":"10.0.0.10"}' ]
  [ "$(cfg .node.labels.fresh)" = '"true"' ]
  fetched_token_nowhere_else
}

@test "scripts#8.3.6 a user-assigned identity: --msi-client-id reaches IMDS; the fetch runs from AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=Yes" {
  serve_azure '{"authorizedTokens":"^imds[.]cli-msi[.]"}'
  run_bootstrap "${fetch_env[@]}" AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=Yes -- --auth msi --msi-client-id cli-msi \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.managedIdentity)" = '{"clientId":"cli-msi"}' ]
  fetched_token_nowhere_else
}

@test "scripts#8.3.7 fetch with no base file: the unpopulated embedded base starts from {}" {
  serve_azure
  run env "${fetch_env[@]}" bash "$bootstrap_sh" --agent-url "file://$archive" \
    --fetch-bootstrap-data --auth msi --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes \
    --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 0 ]
  [[ "$output" == *"embedded base config is not populated; starting from an empty config"* ]]
  [ "$(cfg .azure.targetCluster.resourceId)" = "\"$cluster_id\"" ]
  [ "$(cfg .azure.targetAgentPoolName)" = '"aksflexnodes"' ]
  [ "$(cfg .azure.resourceManagerEndpoint)" = "\"$ARM_URL\"" ]
  [ "$(cfg .azure.managedIdentity)" = '{}' ]
  [ "$(cfg .components.kubernetes)" = '"1.35.6"' ]
  [ "$(cfg '.agent.nodeName | length > 0')" = true ]
  fetched_token_nowhere_else
}

@test "scripts#3.6 a fetch refused by ARM (403) is permanent (65); one that fails for now (503) is temporary (75)" {
  serve_azure '{"authorizedTokens":"^imds[.]cli-msi[.]"}'
  run_bootstrap "${fetch_env[@]}" -- --fetch-bootstrap-data --auth msi \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 65 ]
  # The error names the auth mode, the endpoint without its query, the status, and what to check.
  [[ "$output" == *"POST $ARM_URL$cluster_id/agentPools/aksflexnodes/listBootstrapData (auth msi) answered HTTP 403: AuthorizationFailed"* ]]
  [[ "$output" == *"grant the VM's managed identity a role on $cluster_id"* ]]
  [[ "$output" == *"failed to fetch AKS bootstrap data (agent status 12)"* && "$output" != *api-version=* ]]
  [ ! -e "$config" ]
  run ! grep -q ' start --config' "$CALLS"
  serve_azure '{"alwaysFail":503}'
  run_bootstrap "${fetch_env[@]}" -- --fetch-bootstrap-data --auth msi \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 75 ]
  [[ "$output" == *"answered HTTP 503"* && "$output" == *"a retry may pass"* ]]
  [ ! -e "$config" ]
}

@test "scripts#3.6 a token service refusing the identity (IMDS 400) is permanent (65), not retried as a failure" {
  serve_azure
  run_bootstrap "${fetch_env[@]}" -- --fetch-bootstrap-data --auth msi --msi-client-id not-assigned \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 65 ]
  [[ "$output" == *"no token from $IMDS_URL (HTTP 400)"* ]]
  [[ "$output" == *"failed to fetch AKS bootstrap data (agent status 12)"* ]]
  [ ! -e "$config" ]
}

@test "scripts#3.6 a fetch without a target or an auth mode is a usage error (64) before the agent runs it" {
  jq -c 'del(.azure.targetCluster)' "$base" >"$base.next" && mv "$base.next" "$base"
  run_bootstrap -- --fetch-bootstrap-data --auth msi --agent-pool-name aksflexnodes
  [ "$status" -eq 64 ]
  [[ "$output" == *"fetching bootstrap data needs the target"* ]]
  jq -c 'del(.azure.arc)' "$base" >"$base.next" && mv "$base.next" "$base"
  run_bootstrap -- --fetch-bootstrap-data --cluster-resource-id "$cluster_id"
  [ "$status" -eq 64 ]
  [[ "$output" == *"requires Arc, MSI, or service-principal authentication"* ]]
  run ! grep -q fetch-bootstrap-data "$CALLS"
}

@test "scripts#8.3.8 no base config and no fetch fails (65): the embedded base is not populated" {
  run bash "$bootstrap_sh" --agent-url "file://$archive"
  [ "$status" -eq 65 ]
  [[ "$output" == *"embedded base config is not populated"* ]]
  [ ! -e /usr/local/bin/aks-flex-node ]
}

@test "scripts#8.3.9 SP fetch from the config alone: no --auth, the secret file by content; the SP kept unchanged" {
  serve_azure
  printf 'base-sp-secret\n' >"$BATS_TEST_TMPDIR/sp-secret"
  chmod 0600 "$BATS_TEST_TMPDIR/sp-secret"
  jq -c --arg f "$BATS_TEST_TMPDIR/sp-secret" --arg c "$cluster_id" --arg arm "$ARM_URL" \
    'del(.azure.arc) | .azure.servicePrincipal = {tenantId: "base-tenant", clientId: "base-sp-client", clientSecretFile: $f}
     | .azure.targetCluster.resourceId = $c | .azure.targetAgentPoolName = "aksflexnodes" | .azure.resourceManagerEndpoint = $arm' \
    "$base" >"$base.sp"
  mv "$base.sp" "$base"
  run_bootstrap "${fetch_env[@]}" AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA=true --
  [ "$status" -eq 0 ]
  grep -q " fetch-bootstrap-data .*--auth service-principal .*--sp-tenant-id base-tenant --sp-client-id base-sp-client --sp-client-credential-file $BATS_TEST_TMPDIR/sp-secret" "$CALLS"
  [ "$(cfg .azure.servicePrincipal)" = "{\"tenantId\":\"base-tenant\",\"clientId\":\"base-sp-client\",\"clientSecretFile\":\"$BATS_TEST_TMPDIR/sp-secret\"}" ]
  [ "$(cfg .components.kubernetes)" = '"1.35.6"' ]
  fetched_token_nowhere_else
  [[ "$output" != *base-sp-secret* ]]
}

make_certificate() { # DIR
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/ca.key" -out "$1/ca.pem" -subj /CN=test-ca -days 1 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$1/leaf.key" -out "$1/leaf.csr" -subj /CN=cert-client 2>/dev/null
  openssl x509 -req -in "$1/leaf.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial -out "$1/leaf.pem" -days 1 2>/dev/null
}

@test "scripts#8.3.10 fetch with a PEM certificate file without an extension; an inline secret in the environment is ignored" {
  make_certificate "$BATS_TEST_TMPDIR"
  serve_azure
  cat "$BATS_TEST_TMPDIR/leaf.pem" "$BATS_TEST_TMPDIR/ca.pem" "$BATS_TEST_TMPDIR/leaf.key" >"$BATS_TEST_TMPDIR/sp-cert"
  chmod 0600 "$BATS_TEST_TMPDIR/sp-cert"
  run_bootstrap "${fetch_env[@]}" AKS_FLEX_NODE_SP_CLIENT_SECRET=ignored-inline -- --fetch-bootstrap-data \
    --auth service-principal --sp-tenant-id base-tenant --sp-client-id cert-client \
    --sp-client-certificate-file "$BATS_TEST_TMPDIR/sp-cert" \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.servicePrincipal)" = "{\"tenantId\":\"base-tenant\",\"clientId\":\"cert-client\",\"clientSecretFile\":\"$BATS_TEST_TMPDIR/sp-cert\"}" ]
  [ "$(cfg .components.kubernetes)" = '"1.35.6"' ]
  fetched_token_nowhere_else
  run ! grep -q ignored-inline "$config"
}

@test "scripts#8.3.11 fetch with a PKCS#12 .pfx certificate file" {
  make_certificate "$BATS_TEST_TMPDIR"
  serve_azure
  openssl pkcs12 -export -passout pass: -inkey "$BATS_TEST_TMPDIR/leaf.key" -in "$BATS_TEST_TMPDIR/leaf.pem" \
    -certfile "$BATS_TEST_TMPDIR/ca.pem" -out "$BATS_TEST_TMPDIR/sp.pfx"
  chmod 0600 "$BATS_TEST_TMPDIR/sp.pfx"
  run_bootstrap "${fetch_env[@]}" -- --fetch-bootstrap-data --auth sp --sp-client-id cert-client \
    --sp-client-certificate-file "$BATS_TEST_TMPDIR/sp.pfx" \
    --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 0 ]
  [ "$(cfg .azure.servicePrincipal.clientSecretFile)" = "\"$BATS_TEST_TMPDIR/sp.pfx\"" ]
  fetched_token_nowhere_else
}

@test "scripts#3.6 fetch with an inline secret: it reaches the agent in a private file, never an argument" {
  serve_azure
  run_bootstrap "${fetch_env[@]}" AKS_FLEX_NODE_SP_CLIENT_SECRET=base-sp-secret -- --fetch-bootstrap-data \
    --auth sp --sp-client-id base-sp-client --cluster-resource-id "$cluster_id" --agent-pool-name aksflexnodes \
    --resource-manager-endpoint "$ARM_URL"
  [ "$status" -eq 0 ]
  fetched_token_nowhere_else
  run ! grep -q base-sp-secret "$CALLS"
  grep -q " fetch-bootstrap-data .*--sp-client-secret-file " "$CALLS"
}

@test "scripts#8.3.12 writable /usr/local: the stub is installed there and /opt/unbounded is never created" {
  run_bootstrap --
  [ "$status" -eq 0 ]
  cmp "$release_dir/aks-flex-node-linux-$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')" /usr/local/bin/aks-flex-node
  [ ! -e /opt/unbounded ]
  agent_ran_from /usr/local/bin
}

@test "scripts#8.3.13 the host's /opt/unbounded (0750, artifacts) with /usr/local writable: /usr/local/bin, parent untouched" {
  stage_opt_unbounded
  before=$(opt_unbounded_snapshot)
  run_bootstrap --
  [ "$status" -eq 0 ]
  agent_ran_from /usr/local/bin
  [ ! -e /opt/unbounded/agent ]
  [ "$(opt_unbounded_snapshot)" = "$before" ]
}

@test "scripts#8.3.14 an existing /usr/local/bin at 0750 keeps its mode" {
  install -d -m 0750 /usr/local/bin
  run_bootstrap --
  [ "$status" -eq 0 ]
  [ "$(stat -c '%a' /usr/local/bin)" = 750 ]
}

@test "scripts#8.3.15 a noexec TMPDIR: the agent runs from where it is installed" {
  mkdir -p "$BATS_TEST_TMPDIR/noexec"
  host_mount -t tmpfs -o noexec,mode=0700 tmpfs "$BATS_TEST_TMPDIR/noexec"
  run_bootstrap TMPDIR="$BATS_TEST_TMPDIR/noexec" --
  [ "$status" -eq 0 ]
  agent_ran_from /usr/local/bin
}

@test "scripts#8.3.16 a linked host (/opt/unbounded/agent -> /usr/local) runs /usr/local/bin/aks-flex-node" {
  install -d -m 0755 /opt/unbounded
  ln -s /usr/local /opt/unbounded/agent
  run_bootstrap --
  [ "$status" -eq 0 ]
  agent_ran_from /usr/local/bin
  [ "$(readlink /opt/unbounded/agent)" = /usr/local ]
}

@test "scripts#8.3.17 read-only /usr/local with the host's /opt/unbounded: host root, parent untouched" {
  readonly_usr_local
  stage_opt_unbounded
  before=$(opt_unbounded_snapshot)
  run_bootstrap --
  [ "$status" -eq 0 ]
  agent_ran_from /opt/unbounded/agent/bin
  [ "$(stat -c '%a' /opt/unbounded)" = 750 ]
  [ "$(opt_unbounded_snapshot)" = "$before" ]
}

@test "scripts#8.3.18 read-only /usr/local, no /opt/unbounded: host root, each directory 0755 despite umask 077" {
  readonly_usr_local
  run_bootstrap --
  [ "$status" -eq 0 ]
  agent_ran_from /opt/unbounded/agent/bin
  [ "$(stat -c '%a' /opt/unbounded /opt/unbounded/agent /opt/unbounded/agent/bin)" = "$(printf '755\n755\n755')" ]
}

@test "scripts#8.3.19 an installed host keeps the host root though /usr/local is writable" {
  install -d -m 0755 /opt/unbounded/agent
  run_bootstrap --
  [ "$status" -eq 0 ]
  agent_ran_from /opt/unbounded/agent/bin
  [ ! -e /usr/local/bin/aks-flex-node ]
}

@test "scripts#8.3.20 --install-dir naming the chosen directory, with a trailing slash, is accepted as deprecated" {
  install -d -m 0755 /opt/unbounded/agent
  run_bootstrap -- --install-dir /opt/unbounded/agent/bin/
  [ "$status" -eq 0 ]
  [[ "$output" == *"deprecated"* ]]
  agent_ran_from /opt/unbounded/agent/bin
}

@test "scripts#8.3.21 --install-dir elsewhere is ignored with a warning: nothing there, the agent where the host keeps it" {
  run_bootstrap AKS_FLEX_NODE_INSTALL_DIR=/srv/elsewhere/bin --
  [ "$status" -eq 0 ]
  [[ "$output" == *"--install-dir /srv/elsewhere/bin is deprecated and ignored: this host keeps the agent in /usr/local/bin"* ]]
  [ ! -e /srv/elsewhere ]
  agent_ran_from /usr/local/bin
}

@test "scripts#3.5 a rerun after reset finds the layout kept under /usr/local and replaces it" {
  make_managed_layout /usr/local
  run_bootstrap --
  [ "$status" -eq 0 ]
  [[ "$output" == *"layout retained after reset"* ]]
  [ ! -L /usr/local/bin/aks-flex-node ] && [ ! -e /usr/local/lib/aks-flex-node ]
  agent_ran_from /usr/local/bin
}

@test "scripts#3.5 a rerun after reset finds the layout kept under the host root and replaces it there" {
  make_managed_layout /opt/unbounded/agent
  run_bootstrap --
  [ "$status" -eq 0 ]
  [[ "$output" == *"layout retained after reset"* ]]
  [ ! -e /opt/unbounded/agent/lib/aks-flex-node ]
  agent_ran_from /opt/unbounded/agent/bin
}

@test "scripts#3.4 refused (78) while the agent unit is installed: the link stays, nothing is rendered or run" {
  make_managed_layout /opt/unbounded/agent
  touch /etc/systemd/system/aks-flex-node-agent.service
  run_bootstrap --
  [ "$status" -eq 78 ]
  [[ "$output" == *"while the agent service is installed or active"* ]]
  [ -L /opt/unbounded/agent/bin/aks-flex-node ]
  [ ! -e "$config" ] && [ ! -e "$CALLS" ]
}

@test "scripts#3.4 any other link at the binary path is refused (78) and never run" {
  install -d -m 0755 /usr/local/bin
  write_stub_agent "$BATS_TEST_TMPDIR/other" other
  ln -s "$BATS_TEST_TMPDIR/other" /usr/local/bin/aks-flex-node
  run_bootstrap --
  [ "$status" -eq 78 ]
  [[ "$output" == *"do not execute it as AKS Flex Node"* ]]
  [ "$(readlink /usr/local/bin/aks-flex-node)" = "$BATS_TEST_TMPDIR/other" ]
  [ ! -e "$CALLS" ]
}

@test "scripts#3.4 the archive: a digest mismatch (65), an unsafe path (65), a failed download (75); nothing installed" {
  run_bootstrap -- --agent-sha256 "$(printf '0%.0s' {1..64})"
  [ "$status" -eq 65 ]
  # issue24#4: the values, expected and got.
  [[ "$output" == *"agent archive SHA-256 mismatch: expected $(printf '0%.0s' {1..64}) (--agent-sha256), got $sha"* ]]
  tar -czf "$BATS_TEST_TMPDIR/unsafe.tar.gz" -C / --transform 's,^,../,' etc/hostname
  run_bootstrap -- --agent-url "file://$BATS_TEST_TMPDIR/unsafe.tar.gz" --agent-sha256 "$(sha256sum "$BATS_TEST_TMPDIR/unsafe.tar.gz" | cut -d' ' -f1)"
  [ "$status" -eq 65 ]
  [[ "$output" == *"unsafe path"* ]]
  run_bootstrap -- --agent-url "file://$BATS_TEST_TMPDIR/missing/{{ARCHIVE_NAME}}?sig=secret-sas"
  [ "$status" -eq 75 ]
  # issue24#4: the cause (curl's reason) and the URL without its query, never the signature.
  [[ "$output" == *"failed to download AKS Flex Node agent from file://$BATS_TEST_TMPDIR/missing/aks-flex-node-linux-"*".tar.gz: curl: ("* ]]
  [[ "$output" != *secret-sas* ]]
  [ ! -e /usr/local/bin/aks-flex-node ] && [ ! -e "$CALLS" ]
}

@test "scripts#3.4 the URL placeholders {{OS}}, {{ARCH}} and {{VERSION}} are filled in" {
  arch=$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')
  mkdir -p "$BATS_TEST_TMPDIR/v1.2.3"
  cp "$archive" "$BATS_TEST_TMPDIR/v1.2.3/aks-flex-node-linux-$arch.tar.gz"
  run_bootstrap -- --agent-version v1.2.3 --agent-url "file://$BATS_TEST_TMPDIR/{{VERSION}}/aks-flex-node-{{OS}}-{{ARCH}}.tar.gz"
  [ "$status" -eq 0 ]
  agent_ran_from /usr/local/bin
}

@test "scripts#3.3 preflight runs only when the agent has it; a failing start or preflight ends with the agent's status" {
  run_bootstrap --
  [ "$status" -eq 0 ]
  [[ "$output" == *"no preflight command; skipping preflight"* ]]
  run ! grep -q ' preflight --config' "$CALLS"
  STATUS_start=6 run_bootstrap --
  [ "$status" -eq 6 ]
  AGENT_HAS_PREFLIGHT=1 STATUS_preflight=3 run_bootstrap --
  [ "$status" -eq 3 ]
  [ "$(grep -c ' start --config' "$CALLS")" = 2 ]
}

@test "scripts#3.2 bad settings are permanent failures: unknown option, missing value, bad JSON, bad auth" {
  run_bootstrap -- --no-such-option
  [ "$status" -eq 64 ] && [[ "$output" == *"unknown option: --no-such-option"* ]]
  run_bootstrap -- --auth
  [ "$status" -eq 64 ] && [[ "$output" == *"--auth requires a value"* ]]
  run_bootstrap -- --auth kerberos
  [ "$status" -eq 64 ] && [[ "$output" == *"unsupported auth mode: kerberos"* ]]
  run_bootstrap -- --config-overrides '[1]'
  [ "$status" -eq 65 ] && [[ "$output" == *"--config-overrides must be a JSON object"* ]]
  run_bootstrap AKS_FLEX_NODE_SP_CLIENT_SECRET=a AKS_FLEX_NODE_SP_CLIENT_SECRET_FILE=/b --
  [ "$status" -eq 64 ] && [[ "$output" == *"configure only one service-principal secret"* ]]
  run_bootstrap -- -- extra
  [ "$status" -eq 64 ] && [[ "$output" == *"unexpected positional arguments: extra"* ]]
  [ ! -e /usr/local/bin/aks-flex-node ] && [ ! -e "$CALLS" ]
}

@test "scripts#3.3 not run as root: 77" {
  chmod 0755 "$BATS_TEST_TMPDIR"
  run setpriv --reuid 65534 --regid 65534 --clear-groups env AKS_FLEX_NODE_AGENT_VERSION=v1 bash "$bootstrap_sh"
  [ "$status" -eq 77 ]
  [[ "$output" == *"run this script as root"* ]]
}

@test "scripts#3.2 --help lists every AKS_FLEX_NODE_* variable the script reads" {
  run -0 bash "$bootstrap_sh" --help
  help=$output
  read_vars=$(grep -ow 'AKS_FLEX_NODE_[A-Z0-9_]*[A-Z0-9]' "$bootstrap_sh" | sort -u)
  [ "$(wc -l <<<"$read_vars")" -ge 24 ]
  for var in $read_vars; do
    [[ "$help" == *"[$var]"* ]] || {
      echo "missing from --help: $var"
      return 1
    }
  done
  header=$(sed -n '1,/^set -euo pipefail/p' "$bootstrap_sh")
  while read -r var; do
    [[ "$header" == *"$var"* ]] || {
      echo "missing from the header: $var"
      return 1
    }
  done <<<"$read_vars"
}

@test "scripts#3.2 neither the inline secret nor the signed agent URL is ever on a command line" {
  # Wrappers record every jq and curl command line, as `ps` would show it to any user.
  for tool in jq curl; do
    real=$(command -v "$tool")
    printf '#!/usr/bin/env bash\necho "%s $*" >>"%s/argv"\nexec %s "$@"\n' "$tool" "$BATS_TEST_TMPDIR" "$real" >"$FAKE_BIN/$tool"
    chmod +x "$FAKE_BIN/$tool"
  done
  run_bootstrap AKS_FLEX_NODE_SP_CLIENT_SECRET=inline-secret-value -- --auth sp --sp-client-id c \
    --agent-url "file://$archive?sig=signed-url-token"
  [ "$status" -eq 0 ]
  [[ "$output" != *signed-url-token* && "$output" != *inline-secret-value* ]]
  [ "$(cfg .azure.servicePrincipal.clientSecret)" = '"inline-secret-value"' ]
  grep -q '^curl ' "$BATS_TEST_TMPDIR/argv"
  grep -q '^jq ' "$BATS_TEST_TMPDIR/argv"
  run ! grep -e inline-secret-value -e signed-url-token "$BATS_TEST_TMPDIR/argv"
}
