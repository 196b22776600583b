#!/usr/bin/env bash
# uninstall.sh: removes AKS Flex Node from a host. It runs the agent's reset
# first (without a prompt), then removes the agent's binaries and helpers under
# both /opt/unbounded/agent and /usr/local, /opt/unbounded/agent itself (the
# link to /usr/local, or the emptied directory), an interrupted move's
# /opt/unbounded/agent.staging and .moving marker, and the config, data, log
# and runtime directories. It keeps /opt/unbounded and everything else in it,
# and a link an operator made at /opt/unbounded/agent to anywhere else.
# When no agent binary can run reset (none installed, or it fails or lacks the
# command), it stops and removes the units and files itself.
#
#   sudo uninstall.sh [--force]        --force: no confirmation (needed without a terminal)
#
# Exit codes (shared/api/src/exit-codes.ts scriptExitCodes): 0 removed, or
# cancelled at the prompt; 1 a removal failed (any other failure); 64 the command line was not
# understood, or no terminal to confirm on without --force; 75 an agent
# activation holds the lock, retry; 77 not run as root.
set -euo pipefail

readonly HOST_ROOT="/opt/unbounded/agent"
readonly LEGACY_ROOT="/usr/local"
readonly UPGRADE_LOCK="/run/aks-flex-node-agent-upgrade.lock"
readonly STAGING_DIR="/opt/unbounded/agent.staging"
readonly MOVING_MARKER="/opt/unbounded/agent/.moving"
readonly UNIT_DIR="/etc/systemd/system"
readonly AGENT_UNIT="aks-flex-node-agent.service"
readonly RECOVERY_UNIT="aks-flex-node-agent-recovery.service"
readonly FIRST_BOOT_UNIT="aks-flex-node-bootstrap.service"
# Units reset removes besides the two every release has: the socket and the
# upgrade guard of this release, and the LocalDNS network unit.
readonly OTHER_UNITS=(aks-flex-node-agent.socket aks-flex-node-upgrade-guard.service unbounded-localdns-network.service)
readonly AGENT_DIRS=(/etc/aks-flex-node /var/lib/aks-flex-node /var/log/aks-flex-node /run/aks-flex-node)
# Everything of the agent under a root, besides lib/aks-flex-node (the
# blue/green layout with the recovery script), which goes as a whole.
readonly ROOT_FILES=(bin/aks-flex-node bin/unbounded-agent-nspawn-lifecycle libexec/unbounded-localdns-network)

readonly EXIT_USAGE=64
readonly EXIT_TEMPORARY=75
readonly EXIT_NOT_ROOT=77

# Progress on stdout, warnings and errors on stderr; coloured only on a
# terminal, so logs and journals get plain text.
paint() { # COLOUR LABEL TEXT
  if [[ -t 1 ]]; then
    printf '\033[%sm%s\033[0m %s\n' "$1" "$2" "$3"
  else
    printf '%s %s\n' "$2" "$3"
  fi
}
say_info() { paint '0;34' INFO: "$*"; }
say_success() { paint '0;32' SUCCESS: "$*"; }
say_warn() { paint '1;33' WARNING: "$*" >&2; }
say_error() { paint '0;31' ERROR: "$*" >&2; }

INSTALL_DIR="$HOST_ROOT/bin"

# The first root whose bin/aks-flex-node is executable, host root first.
find_install_dir() {
  local root
  for root in "$HOST_ROOT" "$LEGACY_ROOT"; do
    if [[ -x "$root/bin/aks-flex-node" ]]; then
      INSTALL_DIR="$root/bin"
      return 0
    fi
  done
}

usage() {
  cat <<'USAGE'
usage: uninstall.sh [--force]

Removes AKS Flex Node from this host. --force skips the confirmation; without
a terminal to confirm on it is required.
USAGE
}

parse_args() {
  FORCE=false
  while [[ $# -gt 0 ]]; do
    case "$1" in
      -f | --force | -y | --yes) FORCE=true ;;
      -h | --help)
        usage
        exit 0
        ;;
      *)
        say_error "unknown argument: $1"
        usage >&2
        exit "$EXIT_USAGE"
        ;;
    esac
    shift
  done
}

confirm() {
  local answer=""
  if [[ "$FORCE" == true ]]; then
    say_info "Force flag provided, skipping confirmation."
    return 0
  fi
  cat <<CONFIRM
This removes AKS Flex Node from this host:
  - the agent's reset runs first (units, helpers, host network state)
  - the binaries under $HOST_ROOT and $LEGACY_ROOT, and $HOST_ROOT itself
  - /etc/aks-flex-node, /var/lib/aks-flex-node, /var/log/aks-flex-node
/opt/unbounded and anything else the host keeps there is left alone.
CONFIRM
  # Read from the terminal even when the script itself arrives on stdin.
  if ! { exec 8</dev/tty; } 2>/dev/null; then
    say_error "No terminal to confirm on; rerun with --force to uninstall without confirmation"
    exit "$EXIT_USAGE"
  fi
  printf 'Are you sure you want to continue? (y/N): '
  read -r -n 1 answer <&8 || true
  exec 8<&-
  echo
  if [[ "$answer" != [yY] ]]; then
    say_info "Uninstall cancelled."
    exit 0
  fi
}

# Runs the installed agent's reset without a prompt, and falls back to
# removing the units and files itself when no binary can run it.
run_reset() {
  local agent="$INSTALL_DIR/aks-flex-node"
  say_info "Running reset..."
  if [[ -f "$agent" && -x "$agent" ]]; then
    if TERM=${TERM:-dumb} "$agent" reset </dev/null 2>&1; then
      say_success "Reset completed"
      return 0
    fi
    say_warn "Reset failed or is not supported by $agent; removing the units directly"
  else
    say_warn "No AKS Flex Node binary can run here; skipping reset and removing the units directly"
  fi
  remove_units
}

remove_unit_file() { # PATH [quiet]
  if [[ -e "$1" || -L "$1" ]]; then
    rm -f -- "$1"
    say_info "Removed systemd unit: $1"
  elif [[ -z "${2:-}" ]]; then
    say_info "Systemd unit not found: $1"
  fi
}

# What reset does to systemd when it cannot run. The first-boot unit goes
# first and with --now: as a oneshot that remains active it would otherwise
# stay active without its file, and never start again on a re-provisioned host.
# A host without it sees nothing about it.
remove_units() {
  local unit
  if [[ -e "$UNIT_DIR/$FIRST_BOOT_UNIT" || -L "$UNIT_DIR/$FIRST_BOOT_UNIT" ]]; then
    systemctl disable --now "$FIRST_BOOT_UNIT" >/dev/null 2>&1 || true
    remove_unit_file "$UNIT_DIR/$FIRST_BOOT_UNIT"
  fi
  # The socket goes before the agent, so no connection starts it again.
  for unit in "${OTHER_UNITS[@]}"; do
    if [[ -e "$UNIT_DIR/$unit" || -L "$UNIT_DIR/$unit" ]]; then
      systemctl disable --now "$unit" >/dev/null 2>&1 || true
      remove_unit_file "$UNIT_DIR/$unit"
    fi
  done
  systemctl stop "$AGENT_UNIT" >/dev/null 2>&1 || true
  systemctl disable "$AGENT_UNIT" >/dev/null 2>&1 || true
  remove_unit_file "$UNIT_DIR/$AGENT_UNIT"
  remove_unit_file "$UNIT_DIR/$RECOVERY_UNIT"
  systemctl daemon-reload >/dev/null 2>&1 || true
}

remove_directories() {
  local dir
  for dir in "${AGENT_DIRS[@]}"; do
    if [[ -d "$dir" ]]; then
      rm -rf -- "$dir"
      say_info "Removed directory: $dir"
    else
      say_info "Directory not found: $dir"
    fi
  done
}

# The agent's files under each root, host root first. A dangling link (reset
# keeps bin/aks-flex-node pointing into the layout) counts as present. On a
# linked host the first pass removes the legacy files through the link.
remove_binaries() {
  local root file
  for root in "$HOST_ROOT" "$LEGACY_ROOT"; do
    for file in "${ROOT_FILES[@]}"; do
      if [[ -e "$root/$file" || -L "$root/$file" ]]; then
        rm -f -- "$root/$file"
        say_info "Removed binary: $root/$file"
      fi
    done
    if [[ -d "$root/lib/aks-flex-node" ]]; then
      rm -rf -- "$root/lib/aks-flex-node"
      say_info "Removed managed binaries: $root/lib/aks-flex-node"
    fi
  done
}

# The host root itself. Only the link the migration makes (text exactly
# $LEGACY_ROOT) is the agent's: an operator's link elsewhere is kept. A
# directory goes only once empty; its parent is never touched.
remove_host_root() {
  local dir
  if [[ -e "$STAGING_DIR" || -L "$STAGING_DIR" ]]; then
    rm -rf -- "$STAGING_DIR"
    say_info "Removed interrupted move copy: $STAGING_DIR"
  fi
  if [[ -L "$HOST_ROOT" ]]; then
    if [[ "$(readlink -- "$HOST_ROOT")" == "$LEGACY_ROOT" ]]; then
      rm -f -- "$HOST_ROOT"
      say_info "Removed link: $HOST_ROOT"
    else
      say_info "Kept $HOST_ROOT: a link the agent did not make"
    fi
    return 0
  fi
  [[ -d "$HOST_ROOT" ]] || return 0
  rm -f -- "$MOVING_MARKER"
  for dir in "$HOST_ROOT/lib" "$HOST_ROOT/bin" "$HOST_ROOT/libexec" "$HOST_ROOT"; do
    rmdir -- "$dir" 2>/dev/null || true
  done
  if [[ -e "$HOST_ROOT" ]]; then
    say_info "Kept $HOST_ROOT: it still holds files"
  else
    say_info "Removed directory: $HOST_ROOT"
  fi
}

# The binaries go under the Go releases' lock, so no activation or install
# interleaves; reset has stopped the agent by then.
remove_agent_files() {
  (
    mkdir -p -- "$(dirname -- "$UPGRADE_LOCK")"
    exec 9>>"$UPGRADE_LOCK"
    if ! flock -n 9; then
      say_error "Agent binary activation is in progress; retry the uninstall"
      exit "$EXIT_TEMPORARY"
    fi
    remove_binaries
    remove_host_root
  )
}

main() {
  parse_args "$@"
  echo "AKS Flex Node Uninstaller"
  if [[ $EUID -ne 0 ]]; then
    say_error "This script must be run as root (use sudo)"
    exit "$EXIT_NOT_ROOT"
  fi
  find_install_dir
  confirm
  run_reset
  remove_directories
  remove_agent_files || exit $?
  say_success "AKS Flex Node has been uninstalled."
  cat <<DONE
Removed: the agent's units, binaries and helpers under $HOST_ROOT and $LEGACY_ROOT,
and its config, data, log and runtime directories.
Not removed: Azure Arc software, the Kubernetes Node and any Azure resources.
Anything the host staged under /opt/unbounded was left there.
DONE
}

# Sourcing defines the functions without running anything; `curl … | bash`
# (an empty BASH_SOURCE) still reaches main.
if [[ "${BASH_SOURCE[0]:-$0}" == "$0" ]]; then
  main "$@"
fi
