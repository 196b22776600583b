#!/usr/bin/env bash
# The activation switch: from the activation lock taken to `current` durably
# switched, as an AgentUpgrade runs it (acquireActivationLock, then
# stageAndSwitch), download, extraction and the candidate's own run left
# out; against the bare durable rename of a pointer file in the same run,
# interleaved (bench/activation-switch.ts says how). Issue 13's goal: median
# under 20 ms. The layout is a scratch directory on DIR's filesystem.
# Prints a table and writes JSON to OUT (default dist/bench-activation-switch.json).
# Usage: bash bench/activation-switch.sh   (RUNS=50 DIR=/var/tmp OUT=...)
set -euo pipefail

readonly script_name=bench-activation-switch
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
readonly runs=${RUNS:-50}
readonly json_out=${OUT:-$workspace/dist/bench-activation-switch.json}
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
  scratch=$(mktemp -d "${DIR:-/var/tmp}/aks-flex-node-bench-activation.XXXXXX")
  trap 'rm -rf "${scratch:?}"' EXIT
  bench_bundle "$workspace" "$workspace/bench/activation-switch.ts" "$scratch/bench.mjs"
  mkdir "$scratch/layout"
  mkdir -p "$(dirname "$json_out")"
  "$node" "$scratch/bench.mjs" --dir "$scratch/layout" --runs "$runs" |
    jq --arg fs "$(df --output=fstype "$scratch" | tail -1 | tr -d ' ')" '. + {filesystem: $fs}' >"$json_out"
  echo "$runs runs on $(jq -r .filesystem "$json_out")"
  jq -r '["step", "median_ms", "p90_ms", "ratio"], (.rows[] | [.step, .median_ms, .p90_ms, .ratio_to_baseline]) | @tsv' "$json_out" |
    column -t -s $'\t'
  echo "JSON: $json_out"
}

main "$@"
