#!/usr/bin/env bash
# Hand-overs under real systemd (issue 13): the agent's downtime and refused
# requests across `systemctl restart` and AgentUpgrades, and how soon
# last-good serves again after a switch to each kind of bad candidate. Boots
# one debootstrapped Debian host in systemd-nspawn through the e2e harness
# (docs/e2e.md), which destroys it on exit, failure or Ctrl-C.
# Usage: sudo bash bench/systemd.sh
# Environment: RUNS (restarts and upgrades each, default 5), OUT (JSON,
# default dist/bench-systemd.json), AKS_FLEX_NODE_E2E_MACHINES (where hosts live).
set -euo pipefail

readonly script_name=bench-systemd
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace

main() {
  [[ ${EUID} -eq 0 ]] || { echo "$script_name: must run as root (systemd-nspawn boots the host)" >&2; exit 1; }
  [[ -x "$workspace/dist/aks-flex-node" ]] || {
    echo "$script_name: $workspace/dist/aks-flex-node is missing; run ./run build" >&2
    exit 1
  }
  cd "$workspace"
  # The release archives (two builds, about 100 MB) live here; removed even
  # after Ctrl-C, which ends vitest's workers before their afterAll runs.
  releases=$(mktemp -d /var/tmp/aks-flex-node-bench-systemd.XXXXXX)
  trap 'rm -rf "$releases"' EXIT
  RUNS=${RUNS:-5} OUT=${OUT:-dist/bench-systemd.json} BENCH_SYSTEMD_RELEASES=$releases \
    npx pnpm@10.34.9 exec vitest run --config vitest.bench-systemd.config.ts
}

main "$@"
