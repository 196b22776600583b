# Shared helpers for the bats suites; loaded with `load test_helper`.
# shellcheck shell=bash

workspace=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export workspace

# A directory on PATH holding fake commands a test writes, first in line.
make_fake_bin() {
  FAKE_BIN="$BATS_TEST_TMPDIR/bin"
  mkdir -p "$FAKE_BIN"
  PATH="$FAKE_BIN:$PATH"
  export FAKE_BIN PATH
}

# Writes an executable fake at $FAKE_BIN/NAME that logs its arguments to
# $BATS_TEST_TMPDIR/calls and exits with the given status.
fake_command() {
  local name=$1 status=${2:-0}
  cat >"$FAKE_BIN/$name" <<FAKE
#!/usr/bin/env bash
echo "$name \$*" >>"$BATS_TEST_TMPDIR/calls"
exit $status
FAKE
  chmod +x "$FAKE_BIN/$name"
}

# ---- A private host for the install-script suites.
# run.sh already runs bats in a private mount namespace; each test stacks its
# own mounts on top, so every case starts from a fresh host and none reaches
# the machine's real /usr/local, /opt, /run, /etc or /var: /usr/local, /opt
# and /run are empty tmpfs mounts, /etc and /var overlays whose writes land in
# the test's scratch directory.

HOST_MOUNTS=()

host_mount() { # mount(8) arguments; the last one is the mount point
  mount "$@"
  HOST_MOUNTS+=("${*: -1}")
}

setup_private_host() {
  local dir
  if [[ $(id -u) -ne 0 ]] || [[ "$(readlink /proc/self/ns/mnt)" == "$(readlink /proc/1/ns/mnt)" ]]; then
    skip "needs root in the private mount namespace test/scripts/run.sh makes"
  fi
  # uninstall.sh removes interfaces, policy routes and nft tables: never on the machine's own network.
  if [[ "$(readlink /proc/self/ns/net)" == "$(readlink /proc/1/ns/net)" ]]; then
    skip "needs the private network namespace test/scripts/run.sh makes (unshare -n)"
  fi
  HOST_SCRATCH="$BATS_TEST_TMPDIR/host"
  mkdir -p "$HOST_SCRATCH"
  host_mount -t tmpfs -o mode=0700 tmpfs "$HOST_SCRATCH"
  for dir in /usr/local /opt /run; do
    host_mount -t tmpfs -o mode=0755 tmpfs "$dir"
  done
  for dir in etc var; do
    mkdir -p "$HOST_SCRATCH/$dir.upper" "$HOST_SCRATCH/$dir.work"
    host_mount -t overlay overlay \
      -o "lowerdir=/$dir,upperdir=$HOST_SCRATCH/$dir.upper,workdir=$HOST_SCRATCH/$dir.work" "/$dir"
  done
  # The machine's own agent files, if it has any, are hidden too.
  rm -rf /etc/aks-flex-node /var/lib/aks-flex-node /var/log/aks-flex-node \
    /etc/systemd/system/aks-flex-node-* /etc/systemd/system/unbounded-localdns-network.service
  CALLS="$BATS_TEST_TMPDIR/calls"
  export CALLS
}

# Records a background process for teardown to end.
track_pid() {
  echo "$1" >>"$BATS_TEST_TMPDIR/pids"
}

teardown_private_host() {
  local pid i
  if [[ -e "$BATS_TEST_TMPDIR/pids" ]]; then
    while read -r pid; do
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    done <"$BATS_TEST_TMPDIR/pids"
  fi
  for ((i = ${#HOST_MOUNTS[@]} - 1; i >= 0; i--)); do
    umount "${HOST_MOUNTS[i]}"
  done
  HOST_MOUNTS=()
}

# Makes /usr/local read-only, as on Azure Container Linux.
readonly_usr_local() {
  mount -o remount,ro /usr/local
}

# The host's own /opt/unbounded: mode 0750, staged artifacts.
stage_opt_unbounded() {
  install -d -m 0750 /opt/unbounded
  install -d -m 0700 /opt/unbounded/artifacts
  echo '{"images":["pause:3.10"]}' >/opt/unbounded/artifacts/manifest.json
  chmod 0640 /opt/unbounded/artifacts/manifest.json
  ln -s artifacts/manifest.json /opt/unbounded/current-manifest
}

# Everything of /opt/unbounded but the agent's own paths: name, type, mode,
# owner and link text, one line each, then each file's digest.
opt_unbounded_snapshot() {
  local prune=(\( -path /opt/unbounded/agent -o -path /opt/unbounded/agent.staging \) -prune -o)
  find /opt/unbounded "${prune[@]}" -printf '%p %y %m %u:%g %l\n' | sort
  find /opt/unbounded "${prune[@]}" -type f -exec sha256sum {} + | sort
}

# The binary the stand-in agents are: records `$0 ARGS` in $CALLS, fails with
# 23 when an AKS_FLEX_NODE_* variable reached it (the bootstrap settings must
# be cleared), and answers `preflight --help` only with AGENT_HAS_PREFLIGHT=1.
# STATUS_<command> (e.g. STATUS_start=5) makes a command fail.
# fetch-bootstrap-data is the product's own (PRODUCT_AGENT, the built
# executable), which runs before the settings are cleared and reads some of them.
write_stub_agent() { # PATH [LABEL]
  cat >"$1" <<STUB
#!/usr/bin/env bash
echo "\$0 \$*" >>"$CALLS"
if [[ "\$1" == fetch-bootstrap-data ]]; then exec "\${PRODUCT_AGENT:?the fetch runs the product}" "\$@"; fi
# AKS_FLEX_NODE_E2E_* belong to the test harness (the caller's environment), not to bootstrap.sh.
if env | grep '^AKS_FLEX_NODE_' | grep -qv '^AKS_FLEX_NODE_E2E_'; then echo "stub agent: bootstrap settings leaked" >&2; exit 23; fi
[[ "\$1 \${2:-}" != "preflight --help" ]] || exit \$(( \${AGENT_HAS_PREFLIGHT:-0} == 1 ? 0 : 2 ))
status_var="STATUS_\${1//-/_}"
echo "${2:-stub agent}"
exit "\${!status_var:-0}"
STUB
  chmod 0755 "$1"
}

# A release archive as the Go releases name it, holding the stub agent, for a
# file:// URL. Prints the archive's path.
make_agent_archive() { # [LABEL]
  local dir="$BATS_TEST_TMPDIR/release" arch
  arch=$(uname -m)
  arch=${arch/x86_64/amd64}
  arch=${arch/aarch64/arm64}
  mkdir -p "$dir"
  write_stub_agent "$dir/aks-flex-node-linux-$arch" "${1:-stub agent}"
  tar -czf "$dir/aks-flex-node-linux-$arch.tar.gz" -C "$dir" "aks-flex-node-linux-$arch"
  echo "$dir/aks-flex-node-linux-$arch.tar.gz"
}

# The agent's blue/green layout under ROOT, as the agent leaves it: the binary
# link to current, current to blue, blue executable.
make_managed_layout() { # ROOT
  mkdir -p "$1/bin" "$1/lib/aks-flex-node"
  write_stub_agent "$1/lib/aks-flex-node/aks-flex-node-blue" "managed blue"
  ln -sfn "$1/lib/aks-flex-node/aks-flex-node-blue" "$1/lib/aks-flex-node/aks-flex-node-current"
  ln -sfn "$1/lib/aks-flex-node/aks-flex-node-current" "$1/bin/aks-flex-node"
}

# A fake systemctl recording its arguments in $CALLS; is-active answers
# inactive unless AGENT_ACTIVE=1.
fake_systemctl() {
  cat >"$FAKE_BIN/systemctl" <<'FAKE'
#!/usr/bin/env bash
echo "systemctl $*" >>"$CALLS"
if [[ "$1" == is-active ]]; then [[ "${AGENT_ACTIVE:-0}" == 1 ]]; exit; fi
exit 0
FAKE
  chmod +x "$FAKE_BIN/systemctl"
}

# ---- Azure's services, stood in for by local servers on 127.0.0.1.
# Entra ID, a VM's IMDS, an Arc machine's identity endpoint and Azure Resource
# Manager are remote services that cannot be reached from the test machines.
# test/support/azure-services-main.ts starts servers that speak their
# protocols, inside the suite's private network namespace (run.sh), and the
# product's fetch-bootstrap-data talks to them.

# Bundles the services into one script for Node.js 24; once per file (setup_file).
build_azure_services() {
  "$workspace/node_modules/.bin/esbuild" "$workspace/test/support/azure-services-main.ts" \
    --bundle --platform=node --format=esm --log-level=warning \
    --outfile="$BATS_FILE_TMPDIR/azure-services.mjs"
}

# Starts the services with CONFIG (JSON: tenantId, clients, imds, arm; see
# azure-services-main.ts) and sets AUTHORITY_URL, IMDS_URL, ARC_URL and ARM_URL.
start_azure_services() { # CONFIG-JSON
  local dir="$BATS_TEST_TMPDIR/azure" endpoints i
  mkdir -p "$dir"
  rm -f "$dir/endpoints.json"
  # Where the Arc agent keeps its challenge files; /var is the private host's overlay.
  install -d -m 0700 /var/opt/azcmagent/tokens
  jq --arg out "$dir/endpoints.json" '. + {out: $out, arcChallengeDir: "/var/opt/azcmagent/tokens"}' \
    <<<"$1" >"$dir/config.json"
  # Node.js itself, not node_modules/.bin's wrapper script: teardown kills the
  # pid it tracks, and a killed wrapper would leave the servers running.
  "$workspace/node_modules/node-linux-$(uname -m | sed 's/x86_64/x64/;s/aarch64/arm64/')/bin/node" \
    "$BATS_FILE_TMPDIR/azure-services.mjs" "$dir/config.json" >"$dir/log" 2>&1 3>&- &
  track_pid $!
  endpoints="$dir/endpoints.json"
  for ((i = 0; i < 200; i++)); do
    [[ ! -s "$endpoints" ]] || break
    sleep 0.05
  done
  [[ -s "$endpoints" ]] || {
    echo "the local Azure services did not start: $(cat "$dir/log")"
    return 1
  }
  AUTHORITY_URL=$(jq -r .authorityHost "$endpoints")
  IMDS_URL=$(jq -r .imdsEndpoint "$endpoints")
  ARC_URL=$(jq -r .arcEndpoint "$endpoints")
  ARM_URL=$(jq -r .armEndpoint "$endpoints")
  export AUTHORITY_URL IMDS_URL ARC_URL ARM_URL
}
