#!/usr/bin/env bash
# Start-up cost of `token kubelogin`, the kubelet's exec credential plugin
# (issue 23's goal: 1.25x a bare Node.js start or less), as ratios against the
# pinned Node.js starting an empty script (`node -e 0`), measured by hyperfine
# in the same run. `token` is the cache hit the kubelet meets at almost every
# call, with no network; `token-miss` empties the cache before each run and
# asks a local IMDS stand-in (test/support/token-services) for a new token,
# which @azure/identity is not needed for.
# Runs in private mount and network namespaces (tmpfs over /run and /srv), so
# the cache it fills is not the machine's. Needs root, hyperfine and jq.
# Usage: bash bench/token-startup.sh [binary]   (default dist/aks-flex-node)
# Env: RUNS (default 30); OUT=path writes the results as JSON; JSON=1 prints
# the JSON on stdout instead of the table.
set -euo pipefail

readonly script_name=bench-token-startup
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly runs=${RUNS:-30}
readonly out=${OUT:-}
readonly cache_dir=/run/aks-flex-node/token-cache
# The pinned Node.js itself, not node_modules/.bin's shell wrapper: the
# wrapper's own start would inflate the baseline, and killing it leaves the
# stand-ins' node running.
node="$workspace/node_modules/node-linux-$([[ $(uname -m) == aarch64 ]] && echo arm64 || echo x64)/bin/node"
readonly node

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# Runs inside the namespaces: starts the stand-ins, fills the cache once,
# then has hyperfine time the three commands and prints one JSON object.
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
  [[ -n $(ls -A "$cache_dir") ]] || die "token kubelogin kept no token in $cache_dir: the bench would time misses"
  # One --prepare per command: only the miss empties the cache, and the
  # token it then keeps is there for the next `token` run, a hit again.
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$svc/report.json" \
    --prepare true --prepare true --prepare "rm -rf $cache_dir" \
    -n node "$node -e 0" \
    -n token "$binary token kubelogin" \
    -n token-miss "$binary token kubelogin" >&2
  # CPU time (user + system) too: on a loaded machine the wall-clock ratio
  # says as much about the neighbours as about the start-up.
  jq -c --arg binary "$binary" --argjson runs "$runs" '
    (.results[0].mean) as $base | (.results[0].user + .results[0].system) as $cpu_base
    | {bench: "token-startup", binary: $binary, runs: $runs, baseline: "pinned node -e 0",
       results: [.results[] | {name: .command, mean_ms: (.mean * 1000), median_ms: (.median * 1000),
                               stddev_ms: (.stddev * 1000), ratio_to_node: (.mean / $base),
                               cpu_ms: ((.user + .system) * 1000),
                               cpu_ratio_to_node: ((.user + .system) / $cpu_base)}]}' "$svc/report.json"
}

main() {
  [[ $(id -u) -eq 0 ]] || die "needs root (private namespaces)"
  [[ -x "$binary" ]] || die "$binary is missing; run ./run build"
  command -v hyperfine >/dev/null || die "hyperfine is missing (apt-get install hyperfine)"
  command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
  if [[ ${2:-} == --inside ]]; then
    inside
    return
  fi
  local json
  json=$(unshare -m -n --propagation private bash "$0" "$binary" --inside)
  [[ -z $out ]] || { mkdir -p "$(dirname "$out")"; echo "$json" >"$out"; echo "$script_name: wrote $out" >&2; }
  if [[ ${JSON:-0} == 1 ]]; then
    echo "$json"
  else
    echo "$json" | jq -r '.results[] | [.name, (.mean_ms * 10 | round / 10), (.median_ms * 10 | round / 10),
      (.ratio_to_node * 100 | round / 100), (.cpu_ms * 10 | round / 10), (.cpu_ratio_to_node * 100 | round / 100)] | @tsv' |
      (printf 'role\tmean_ms\tmedian_ms\tratio_to_node\tcpu_ms\tcpu_ratio_to_node\n'; cat)
  fi
}

main "$@"
