#!/usr/bin/env bash
# The digest of the built executable as the product takes it (fileSha256),
# against node:crypto hashing the same bytes in memory, in the same run
# (bench/file-digest.ts says how). Prints a table and writes JSON to OUT
# (default dist/bench-file-digest.json).
# Usage: bash bench/file-digest.sh [binary]   (RUNS=9 OUT=...)
set -euo pipefail

readonly script_name=bench-file-digest
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
readonly binary=${1:-$workspace/dist/aks-flex-node}
readonly runs=${RUNS:-9}
readonly json_out=${OUT:-$workspace/dist/bench-file-digest.json}
scratch=
# shellcheck source=bench/lib/bundled-part.sh
source "$workspace/bench/lib/bundled-part.sh"

die() {
  echo "$script_name: $*" >&2
  exit 1
}

main() {
  local node
  node=$(bench_pinned_node "$workspace") || die "no Node.js to run on"
  command -v jq >/dev/null || die "jq is missing; install it (apt-get install jq)"
  [[ -f "$binary" ]] || die "no executable at $binary; build it first (./run build)"
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/aks-flex-node-bench-digest.XXXXXX")
  trap 'rm -rf "${scratch:?}"' EXIT
  bench_bundle "$workspace" "$workspace/bench/file-digest.ts" "$scratch/bench.mjs"
  mkdir -p "$(dirname "$json_out")"
  "$node" "$scratch/bench.mjs" --file "$binary" --runs "$runs" >"$json_out"
  echo "$(jq -r .bytes "$json_out") bytes, $runs digests of each kind, interleaved"
  jq -r '["kind", "median_cpu_ms", "ratio_to_floor"], (.rows[] | [.kind, .median_cpu_ms, .ratio_to_floor]) | @tsv' "$json_out" |
    column -t -s $'\t'
  echo "JSON: $json_out"
}

main "$@"
