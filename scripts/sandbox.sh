#!/usr/bin/env bash
# pnpm sandbox: boots a throwaway plain Debian host under real systemd
# (systemd-nspawn), installs dist/aks-flex-node in it as an operator would
# (`aks-flex-node start`), reboots it, upgrades it to a second build and
# then to a candidate that cannot serve (rolled back to last-good), prints
# the layout and `aks-flex-node status` at each step, then powers the host
# off and removes it.
#
# The machine handling is the e2e harness's (test/e2e/harness): this script
# only builds what is missing and the second build, bundles
# test/e2e/sandbox.ts with esbuild and runs it, forwarding Ctrl-C and
# SIGTERM so the harness tears the host down.
#
# With --ignition it instead boots an Azure Container Linux-like host (read-only
# /usr) provisioned from scripts/aks-flex-node-bootstrap.bu, rendered with
# scripts/bootstrap.sh, and shows it joining on first boot and skipping the
# first-boot unit after a reboot (test/e2e/sandbox-ignition.ts).
#
# Usage: scripts/sandbox.sh [--ignition|--legacy]   (as root)
# --legacy: a host an earlier release installed under /usr/local is taken
# over and moved into /opt/unbounded/agent (test/e2e/sandbox-legacy.ts).
set -euo pipefail

readonly script_name="${0##*/}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly repo_root
readonly binary="${repo_root}/dist/aks-flex-node"
# The version of the second build the sandbox upgrades to.
readonly second_version=0.2.0-sandbox

work_dir=""
child_pid=""
# What a forwarded signal goes to: the child's pid, or "-pid" for its process group.
child_target=""
# The signal that asked the script to stop, if one did.
stop_signal=""

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
# that way for tsc and vitest; a bundle sidesteps both. The banner gives the
# CommonJS packages inside the ESM bundle (yaml) the require() they call.
bundle_sandbox() {
  esbuild "${repo_root}/test/e2e/sandbox.ts" --bundle --platform=node --format=esm \
    --banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" \
    --log-level=warning --outfile="${work_dir}/sandbox.mjs"
}

# Builds the product again with another version into the work directory,
# for the sandbox to upgrade to. Its output is shown only when it fails. It
# runs in a process group of its own (setsid), so that a forwarded signal
# ends all of it (esbuild, the SEA writer, postject), not only build.mjs.
build_second_release() {
  local node_bin="$1"
  log "building a second release (${second_version}) to upgrade to"
  setsid "${node_bin}" "${repo_root}/scripts/build.mjs" --version "${second_version}" \
    --out "${work_dir}/release" >"${work_dir}/build.log" 2>&1 &
  child_pid=$!
  child_target="-${child_pid}"
  local status=0
  wait_for_child || status=$?
  # Stopped by a signal, the build's failure is no news.
  [[ -z ${stop_signal} ]] || exit_for_signal
  if ((status != 0)); then
    cat "${work_dir}/build.log" >&2
    die "building the second release failed; its output is above"
  fi
}

# With a child running, the signal goes to it: the sandbox tears its host
# down, the build stops. Between children there is nothing to tear down, so
# the script stops as the signal asks.
forward_signal() {
  stop_signal="$1"
  if [[ -n ${child_pid} ]]; then
    kill -s "${stop_signal}" -- "${child_target}" 2>/dev/null || true
  else
    exit_for_signal
  fi
}

exit_for_signal() {
  exit $((128 + $(kill -l "${stop_signal}")))
}

# Waits until the child has really exited: a trapped signal interrupts
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
  local ignition=false legacy=()
  case "${1:-}" in
    "") ;;
    --ignition) ignition=true ;;
    --legacy) legacy=(--legacy) ;;
    *) die "unknown argument: $1 (usage: scripts/sandbox.sh [--ignition|--legacy])" ;;
  esac
  [[ ${EUID} -eq 0 ]] || die "must run as root: it mounts overlays and boots containers"
  # Run with the workspace's pinned Node.js and tools, also outside `pnpm run`.
  export PATH="${repo_root}/node_modules/.bin:${PATH}"
  command -v systemd-nspawn >/dev/null || die "systemd-nspawn not found; apt-get install systemd-container"
  ensure_binary
  trap on_exit EXIT
  trap 'forward_signal INT' INT
  trap 'forward_signal TERM' TERM
  # Under /var/tmp rather than /tmp: the second build is about 170 MB.
  work_dir="$(mktemp -d -p /var/tmp aks-flex-node-sandbox-XXXXXX)"
  bundle_sandbox
  # The real executable, not node_modules/.bin's shell wrapper: the wrapper
  # would take the forwarded signal and die while Node.js runs on.
  local node_bin
  node_bin="$(node -p process.execPath)"
  if [[ ${ignition} == true ]]; then
    [[ -f "${repo_root}/scripts/bootstrap.sh" ]] || die "scripts/bootstrap.sh is missing; --ignition embeds it"
    # The stand-ins for IMDS and ARM the first boot fetches its join data from.
    esbuild "${repo_root}/test/support/azure-services-main.ts" --bundle --platform=node --format=esm \
      --log-level=warning --outfile="${work_dir}/azure-services.mjs"
    AKS_FLEX_NODE_REPO_ROOT="${repo_root}" "${node_bin}" "${work_dir}/sandbox.mjs" \
      --ignition --work-dir "${work_dir}" &
    child_pid=$!
    child_target="${child_pid}"
    wait_for_child
    return
  fi
  build_second_release "${node_bin}"
  AKS_FLEX_NODE_REPO_ROOT="${repo_root}" "${node_bin}" "${work_dir}/sandbox.mjs" \
    --release-dir "${work_dir}/release" --release-version "${second_version}" "${legacy[@]}" &
  child_pid=$!
  child_target="${child_pid}"
  wait_for_child
}

main "$@"
