#!/usr/bin/env bash
# uninstall.sh: removes AKS Flex Node from a host. It runs the agent's reset
# first (without a prompt), then removes the agent's binaries and helpers under
# both /opt/unbounded/agent and /usr/local, /opt/unbounded/agent itself (the
# link to /usr/local, or the emptied directory), an interrupted move's
# /opt/unbounded/agent.staging and .moving marker, and the config, data, log
# and runtime directories. It keeps /opt/unbounded and everything else in it,
# and a link an operator made at /opt/unbounded/agent to anywhere else.
# When no agent binary can run reset (none installed, or it fails or lacks the
# command), it stops and removes the units and files itself. Either way it then
# removes what the Go agent library leaves of the node, as reset does (spec
# daemon 8.1): the nspawn machines kube1/kube2 (stopped, then their settings,
# hooks and root filesystems), LocalDNS (nft table, dummy interface), the
# WireGuard and overlay interfaces, their policy routes, the WireGuard keys and
# the legacy bridge CNI. A link named localdns that is not a dummy is left.
# Without ip or nft it warns and skips what they would show.
#
#   sudo uninstall.sh [--force]        --force: no confirmation (needed without a terminal)
#
# RESET_BUSY_WAIT_SECONDS (whole seconds; 120 when unset or empty): how long
# a reset refused because an agent activation holds the lock is asked again
# before the script gives up with 75, having removed nothing. Any other value
# stops it with 64 before anything runs.
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

# The node the Go agent library leaves (shared/layout/src/node-network.ts and
# paths.ts hold the product's copies of these names).
readonly MACHINES=(kube1 kube2)
readonly MACHINES_DIR="/var/lib/machines"
readonly NSPAWN_DIR="/etc/systemd/nspawn"
readonly REGENERATE_TEMPLATE="unbounded-agent-regenerate-config@.service"
readonly WIREGUARD_KEYS=(/etc/wireguard/server.priv /etc/wireguard/server.pub)
readonly LOCALDNS_LINK="localdns"
readonly LOCALDNS_NFT_TABLE=(ip unbounded_localdns)
readonly WIREGUARD_TABLE_FIRST=51820
readonly WIREGUARD_TABLE_LAST=51899
readonly OVERLAY_LINKS=(geneve0 vxlan0 ipip0 unbounded0 cbr0)
readonly BRIDGE_CNI_LINK="cni0"
readonly BRIDGE_CNI_CHAIN=(inet cni_plugins_masquerade masq_checks)
readonly BRIDGE_CNI_MARKER="net: bridge,"
# The same network's iptables side (nat): CNI-… chains its commented rules
# name, and their jumps from POSTROUTING, as the Go reset removes them.
readonly BRIDGE_CNI_IPTABLES_PARENT=POSTROUTING

readonly EXIT_USAGE=64
readonly EXIT_TEMPORARY=75
readonly EXIT_NOT_ROOT=77
# The agent's exit code for a change refused because another activation holds
# the lock (exit-codes.ts `busy`).
readonly AGENT_BUSY_EXIT_CODE=4
readonly RESET_BUSY_RETRY_SECONDS=2

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
  # Checked before anything runs: a bad value would otherwise surface only
  # after a refused reset, as a bash arithmetic error.
  if [[ -n "${RESET_BUSY_WAIT_SECONDS:-}" && ! "$RESET_BUSY_WAIT_SECONDS" =~ ^[0-9]{1,6}$ ]]; then
    say_error "RESET_BUSY_WAIT_SECONDS must be a whole number of seconds (0 to 999999), not '$RESET_BUSY_WAIT_SECONDS'; nothing was removed"
    exit "$EXIT_USAGE"
  fi
}

confirm() {
  local answer=""
  if [[ "$FORCE" == true ]]; then
    say_info "Force flag provided, skipping confirmation."
    return 0
  fi
  cat <<CONFIRM
This removes AKS Flex Node from this host:
  - the agent's reset runs first (units, helpers, upgrade signal)
  - the nspawn machines kube1/kube2, and the node network the agent made
    (LocalDNS, WireGuard and overlay interfaces, their policy routes, keys);
    the host's own interfaces and routes are left alone
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
# removing the units and files itself when no binary can run it. A reset
# refused because an activation holds the lock (exit 4: an upgrade staging,
# the host-root move a daemon runs seconds after it starts, a recovery) is
# asked again until RESET_BUSY_WAIT_SECONDS pass: removing the units under a
# running activation is the race spec daemon 8.4 describes. Still refused, the
# script stops with 75 before it has removed anything.
run_reset() {
  local agent="$INSTALL_DIR/aks-flex-node" code waited=0
  local wait_seconds=${RESET_BUSY_WAIT_SECONDS:-120}
  say_info "Running reset..."
  if [[ -f "$agent" && -x "$agent" ]]; then
    while :; do
      code=0
      TERM=${TERM:-dumb} "$agent" reset </dev/null 2>&1 || code=$?
      if [[ $code -eq 0 ]]; then
        say_success "Reset completed"
        return 0
      fi
      [[ $code -eq $AGENT_BUSY_EXIT_CODE ]] || break
      if ((waited >= wait_seconds)); then
        say_error "An agent activation still holds the lock after ${waited}s; nothing was removed. Run uninstall.sh again once '$agent status' shows 'activation: idle'"
        exit "$EXIT_TEMPORARY"
      fi
      say_info "An agent activation holds the lock; asking again in ${RESET_BUSY_RETRY_SECONDS}s (waited ${waited}s of ${wait_seconds}s)"
      sleep "$RESET_BUSY_RETRY_SECONDS"
      waited=$((waited + RESET_BUSY_RETRY_SECONDS))
    done
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

remove_path() { # PATH: a file, link or tree; absent is fine (checked first: EROFS on a read-only /usr)
  if [[ -e "$1" || -L "$1" ]]; then
    rm -rf -- "$1"
    say_info "Removed: $1"
  fi
}

NODE_CHANGED=false

machine_present() { # MACHINE: anything of it on the host
  local p
  for p in "$MACHINES_DIR/$1" "$NSPAWN_DIR/$1.nspawn" "$UNIT_DIR/systemd-nspawn@$1.service.d" \
    "$UNIT_DIR/unbounded-agent-regenerate-config@$1.service" "$UNIT_DIR/machines.target.wants/systemd-nspawn@$1.service"; do
    [[ -e "$p" || -L "$p" ]] && return 0
  done
  return 1
}

# A machine systemd-machined still knows once its unit stopped runs outside
# it (started by hand with systemd-nspawn, or by another unit): terminated as
# the Go releases' machine drop-in does (machinectl terminate), then waited
# for, up to 30 s. A host without machinectl has no machined to know one.
terminate_machine() {
  local machine=$1 i
  command -v machinectl >/dev/null 2>&1 || return 0
  machinectl show --property=Name --value "$machine" >/dev/null 2>&1 || return 0
  say_info "Terminating nspawn machine $machine, which runs outside systemd-nspawn@$machine.service"
  machinectl terminate "$machine" >/dev/null 2>&1 || true
  for ((i = 0; i < 150; i++)); do
    machinectl show --property=Name --value "$machine" >/dev/null 2>&1 || return 0
    sleep 0.2
  done
  say_warn "nspawn machine $machine still runs after machinectl terminate; its root filesystem may not be removable: run \`machinectl terminate $machine\` (\`machinectl list\` shows it), then run uninstall.sh again"
}

# The machines: stopped first (their pre-start oneshot before them), since a
# running machine holds mounts in its root filesystem and its network agent
# would recreate what remove_node_network removes.
remove_machines() {
  local machine
  for machine in "${MACHINES[@]}"; do
    machine_present "$machine" || continue
    NODE_CHANGED=true
    systemctl stop "unbounded-agent-regenerate-config@$machine.service" "systemd-nspawn@$machine.service" >/dev/null 2>&1 || true
    terminate_machine "$machine"
    remove_path "$UNIT_DIR/machines.target.wants/systemd-nspawn@$machine.service"
    remove_path "$NSPAWN_DIR/$machine.nspawn"
    remove_path "$UNIT_DIR/systemd-nspawn@$machine.service.d"
    remove_path "$UNIT_DIR/unbounded-agent-regenerate-config@$machine.service"
    remove_path "$MACHINES_DIR/$machine"
  done
  if [[ -e "$UNIT_DIR/$REGENERATE_TEMPLATE" ]]; then
    NODE_CHANGED=true
    remove_path "$UNIT_DIR/$REGENERATE_TEMPLATE"
  fi
  local key
  for key in "${WIREGUARD_KEYS[@]}"; do
    remove_path "$key"
  done
}

delete_link() { # NAME
  if ip link delete dev "$1" 2>/dev/null || ! ip link show dev "$1" >/dev/null 2>&1; then
    say_info "Removed network interface: $1"
  else
    say_warn "Could not remove network interface $1; remove it with: ip link delete dev $1"
  fi
}

# The bridge CNI's iptables nat chains: those a rule commented with the
# network's name appends to or jumps to, each checked to exist (listed) before
# its jumps from POSTROUTING go (highest line first, as each deletion
# renumbers the rest), then it is flushed and deleted. Another network's stay.
remove_bridge_cni_iptables() {
  local chain line
  if ! command -v iptables-save >/dev/null 2>&1 || ! command -v iptables >/dev/null 2>&1; then
    say_warn "iptables is not installed: the bridge CNI iptables chains were not checked"
    return 0
  fi
  for chain in $({ iptables-save -t nat 2>/dev/null || true; } | awk '
    /name: \\"bridge\\"|name: "bridge"/ {
      for (i = 1; i < NF; i++) if (($i == "-A" || $i == "-j") && $(i + 1) ~ /^["\047]?CNI-/) {
        c = $(i + 1); gsub(/["\047]/, "", c); print c
      }
    }' | sort -u); do
    iptables --wait -t nat -n -L "$chain" >/dev/null 2>&1 || continue
    for line in $(iptables --wait -t nat -L "$BRIDGE_CNI_IPTABLES_PARENT" --line-numbers -n 2>/dev/null |
      awk -v c="$chain" '$2 == c { print $1 }' | sort -rn); do
      iptables --wait -t nat -D "$BRIDGE_CNI_IPTABLES_PARENT" "$line" ||
        say_warn "Could not remove the jump to $chain at $BRIDGE_CNI_IPTABLES_PARENT line $line"
    done
    if iptables --wait -t nat -F "$chain" && iptables --wait -t nat -X "$chain"; then
      say_info "Removed bridge CNI iptables chain: nat $chain"
    else
      say_warn "Could not remove the bridge CNI iptables chain nat $chain; remove it with: iptables -t nat -F $chain && iptables -t nat -X $chain"
    fi
  done
}

# LocalDNS, the WireGuard and overlay interfaces, their policy routes and the
# legacy bridge CNI, as the agent's reset removes them.
remove_node_network() {
  local line name handle table family listing
  # Each listing is read whole before it is searched: with pipefail, a grep -q
  # that stops at the first match would fail the pipeline on the writer's SIGPIPE.
  if ! nft --version >/dev/null 2>&1; then
    say_warn "nft is not installed: the LocalDNS nft table and the bridge CNI rules were not checked"
  else
    listing=$(nft list tables 2>/dev/null || true)
    if grep -qx "table ${LOCALDNS_NFT_TABLE[*]}" <<<"$listing"; then
      nft delete table "${LOCALDNS_NFT_TABLE[@]}" && say_info "Removed nft table: ${LOCALDNS_NFT_TABLE[*]}"
    fi
    while read -r handle; do
      [[ -n "$handle" ]] || continue
      nft delete rule "${BRIDGE_CNI_CHAIN[@]}" handle "$handle" && say_info "Removed bridge CNI nft rule: handle $handle"
    done < <({ nft -a list chain "${BRIDGE_CNI_CHAIN[@]}" 2>/dev/null || true; } | sed -n "/${BRIDGE_CNI_MARKER}/s/.*# handle \([0-9][0-9]*\)\$/\1/p")
  fi
  remove_bridge_cni_iptables
  if ! ip -V >/dev/null 2>&1; then
    say_warn "ip is not installed: no network interface or policy route was checked"
    return 0
  fi
  if ip link show dev "$LOCALDNS_LINK" >/dev/null 2>&1; then
    listing=$(ip -d -o link show dev "$LOCALDNS_LINK")
    if grep -Eq '\\[[:space:]]+dummy([[:space:]]|$)' <<<"$listing"; then
      delete_link "$LOCALDNS_LINK"
    else
      say_warn "Left network interface $LOCALDNS_LINK: it is not the dummy LocalDNS creates, so it is not the agent's"
    fi
  fi
  while read -r line; do
    name=${line#*: }
    name=${name%%[:@]*}
    if [[ "$name" =~ ^wg([0-9]+)$ ]] && ((BASH_REMATCH[1] >= WIREGUARD_TABLE_FIRST && BASH_REMATCH[1] <= WIREGUARD_TABLE_LAST)); then
      delete_link "$name"
    fi
  done < <(ip -o link show)
  for name in "${OVERLAY_LINKS[@]}" "$BRIDGE_CNI_LINK"; do
    if ip link show dev "$name" >/dev/null 2>&1; then delete_link "$name"; fi
  done
  # The tables in use, from one listing each of the rules and the routes
  # (-N: numbers, not names from rt_tables), rather than 80 probes per family.
  for family in -4 -6; do
    for table in $({
      ip "$family" -N rule show 2>/dev/null | sed -n 's/.* lookup \([0-9][0-9]*\).*/\1/p'
      ip "$family" -N route show table all 2>/dev/null | sed -n 's/.* table \([0-9][0-9]*\).*/\1/p'
    } | sort -nu); do
      ((table >= WIREGUARD_TABLE_FIRST && table <= WIREGUARD_TABLE_LAST)) || continue
      while ip "$family" rule del table "$table" 2>/dev/null; do :; done
      ip "$family" route flush table "$table" 2>/dev/null || true
      say_info "Removed policy routing table $table ($family)"
    done
  done
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
    umask 077
    mkdir -p -- "$(dirname -- "$UPGRADE_LOCK")"
    exec 9>>"$UPGRADE_LOCK"
    # Root's alone, as the agent keeps it: a read bit is all flock(2) needs to
    # hold it. Through the descriptor, so the file changed is the one locked.
    chmod 0600 /proc/self/fd/9
    chown root:root /proc/self/fd/9
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
  remove_machines
  remove_node_network
  if [[ "$NODE_CHANGED" == true ]]; then
    systemctl daemon-reload >/dev/null 2>&1 || true
  fi
  remove_directories
  remove_agent_files || exit $?
  say_success "AKS Flex Node has been uninstalled."
  cat <<DONE
Removed: the agent's units, binaries and helpers under $HOST_ROOT and $LEGACY_ROOT,
its config, data, log and runtime directories, and the node's machines and
network state (LocalDNS, WireGuard and overlay interfaces, policy routes, keys).
Not removed: Azure Arc software, the Kubernetes Node and any Azure resources.
Anything the host staged under /opt/unbounded was left there.
DONE
}

# Sourcing defines the functions without running anything; `curl … | bash`
# (an empty BASH_SOURCE) still reaches main.
if [[ "${BASH_SOURCE[0]:-$0}" == "$0" ]]; then
  main "$@"
fi
