#!/usr/bin/env bash
# pnpm sandbox: boots a throwaway plain Debian host under real systemd
# (systemd-nspawn), installs dist/aks-flex-node in it as an operator would
# (`aks-flex-node start`), prints the layout and `aks-flex-node status` at
# each step, then powers the host off and removes it.
#
# The machine handling is the e2e harness's (test/e2e/harness): this script
# only builds what is missing, bundles test/e2e/sandbox.ts with esbuild and
# runs it, forwarding Ctrl-C and SIGTERM so the harness tears the host down.
#
# Usage: scripts/sandbox.sh   (as root)
set -euo pipefail

readonly script_name="${0##*/}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly repo_root
readonly binary="${repo_root}/dist/aks-flex-node"

work_dir=""
child_pid=""

log() {
  printf '%s: %s\n' "${script_name}" "$*" >&2
}

die() {
  log "error: $*"
  exit 1
}

run_pnpm() {
  if command -v pnpm >/dev/null; then
    pnpm "$@"
  else
    npx --yes "$(jq -r .packageManager "${repo_root}/package.json")" "$@"
  fi
}

ensure_binary() {
  [[ -x ${binary} ]] && return
  log "dist/aks-flex-node is missing; running pnpm build"
  (cd "${repo_root}" && run_pnpm build)
  [[ -x ${binary} ]] || die "pnpm build did not produce ${binary}"
}

# Node's type stripping runs .ts files but does not map the harness's
# `./x.js` import specifiers to `./x.ts`, and the root tsconfig keeps them
# that way for tsc and vitest; a bundle sidesteps both.
bundle_sandbox() {
  esbuild "${repo_root}/test/e2e/sandbox.ts" --bundle --platform=node --format=esm \
    --log-level=warning --outfile="${work_dir}/sandbox.mjs"
}

forward_signal() {
  local signal="$1"
  if [[ -n ${child_pid} ]]; then
    kill -s "${signal}" "${child_pid}" 2>/dev/null || true
  fi
}

# Waits until the sandbox has really exited: a trapped signal interrupts
# `wait` while the harness is still tearing the host down.
wait_for_child() {
  local status=0
  while :; do
    wait "${child_pid}" && status=0 || status=$?
    kill -0 "${child_pid}" 2>/dev/null || break
  done
  child_pid=""
  return "${status}"
}

on_exit() {
  local status=$?
  if [[ -n ${child_pid} ]]; then
    forward_signal TERM
    wait_for_child || true
  fi
  [[ -n ${work_dir} ]] && rm -rf "${work_dir}"
  exit "${status}"
}

main() {
  [[ ${EUID} -eq 0 ]] || die "must run as root: it mounts overlays and boots containers"
  # Run with the workspace's pinned Node.js and tools, also outside `pnpm run`.
  export PATH="${repo_root}/node_modules/.bin:${PATH}"
  command -v systemd-nspawn >/dev/null || die "systemd-nspawn not found; apt-get install systemd-container"
  ensure_binary
  trap on_exit EXIT
  trap 'forward_signal INT' INT
  trap 'forward_signal TERM' TERM
  work_dir="$(mktemp -d)"
  bundle_sandbox
  # The real executable, not node_modules/.bin's shell wrapper: the wrapper
  # would take the forwarded signal and die while Node.js runs on.
  local node_bin
  node_bin="$(node -p process.execPath)"
  AKS_FLEX_NODE_REPO_ROOT="${repo_root}" "${node_bin}" "${work_dir}/sandbox.mjs" &
  child_pid=$!
  wait_for_child
}

main "$@"
