#!/usr/bin/env bash
# install.sh: installs the AKS Flex Node agent binary, for a first install or
# for a rejoin after the agent's reset. Run as root:
#
#   curl -fsSL https://raw.githubusercontent.com/Azure/AKSFlexNode/<version>/scripts/install.sh | sudo bash
#
# The install directory is chosen from the host, never by running the binary:
# /opt/unbounded/agent/bin on a host installed there (or whose
# /opt/unbounded/agent an operator linked elsewhere), /usr/local/bin where that
# is writable, and /opt/unbounded/agent/bin otherwise. The agent moves itself
# under /opt/unbounded/agent when it starts. See docs/usage/operations.md.
#
# Environment:
#   AKS_FLEX_NODE_VERSION        release tag; without it the latest release is asked for
#   AKS_FLEX_NODE_DOWNLOAD_URL   the archive's full URL instead of the GitHub release layout;
#                                the GitHub API is then never asked (offline mirrors work)
#   AKS_FLEX_NODE_SHA256         like --sha256 HEX: the archive's expected SHA-256, checked
#                                before anything is extracted (exit 65 on a mismatch)
#   AKS_FLEX_NODE_LOCAL_BINARY   an already-extracted binary to install; nothing is downloaded
#   AKS_FLEX_NODE_INSTALL_DIR    deprecated, like --install-dir DIR: accepted when it
#                                names the chosen directory, otherwise ignored with a warning
#
# Exit codes (the same table as shared/api/src/exit-codes.ts scriptExitCodes):
#   0 installed; 1 a step failed (retrying may help); 64 the command line was
#   not understood; 65 the archive or binary given is wrong; 69 the host cannot
#   run the agent (OS, architecture, missing command); 75 temporary: a download
#   failed or an agent activation holds the lock; 77 not run as root;
#   78 the host's state refuses the install (a link at the binary's path).
set -euo pipefail

readonly HOST_ROOT="/opt/unbounded/agent"
readonly LEGACY_ROOT="/usr/local"
readonly UPGRADE_LOCK="/run/aks-flex-node-agent-upgrade.lock"
readonly SERVICE_UNIT="aks-flex-node-agent.service"
readonly SERVICE_UNIT_PATH="/etc/systemd/system/aks-flex-node-agent.service"
readonly CONFIG_DIR="/etc/aks-flex-node"
readonly DATA_DIR="/var/lib/aks-flex-node"
readonly LOG_DIR="/var/log/aks-flex-node"
readonly GITHUB_REPO="Azure/AKSFlexNode"

readonly EXIT_FAILURE=1
readonly EXIT_USAGE=64
readonly EXIT_BAD_INPUT=65
readonly EXIT_UNSUPPORTED_HOST=69
readonly EXIT_TEMPORARY=75
readonly EXIT_NOT_ROOT=77
readonly EXIT_REFUSED=78

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

# ---- begin shared install logic (identical in install.sh and bootstrap.sh; scripts/scripts.test.ts compares them)
# Both scripts must stand alone (piped from curl, or written by Ignition with no
# sibling files), so the logic is carried in each rather than sourced.

INSTALL_DIR="$LEGACY_ROOT/bin"
MANAGED_BINARY_DIR="$LEGACY_ROOT/lib/aks-flex-node"

# Whether $LEGACY_ROOT/bin exists or can be made, and takes a new file. The
# probe is removed at once, so no .aks-flex-node.* file is left behind.
legacy_bin_writable() {
  local probe
  if [[ ! -d "$LEGACY_ROOT/bin" ]]; then
    install -d -o root -g root -m 0755 "$LEGACY_ROOT/bin" 2>/dev/null || return 1
  fi
  probe=$(mktemp "$LEGACY_ROOT/bin/.aks-flex-node.XXXXXX" 2>/dev/null) || return 1
  rm -f -- "$probe"
}

# Chooses INSTALL_DIR and MANAGED_BINARY_DIR from the host's state. It never
# runs the binary. A real host root wins (reset keeps the layout there), and so
# does an operator's link at it that points anywhere but $LEGACY_ROOT (upstream
# #381); the link the migration makes to $LEGACY_ROOT is the legacy layout.
# Otherwise a writable /usr/local/bin is preferred, so an earlier release rolled
# back to finds itself where it expects; /opt/unbounded alone is no installation.
resolve_install_dir() {
  local root=$LEGACY_ROOT
  if [[ -L "$HOST_ROOT" ]]; then
    if [[ "$(readlink -- "$HOST_ROOT")" != "$LEGACY_ROOT" ]] || ! legacy_bin_writable; then
      root=$HOST_ROOT
    fi
  elif [[ -d "$HOST_ROOT" ]] || ! legacy_bin_writable; then
    root=$HOST_ROOT
  fi
  INSTALL_DIR="$root/bin"
  MANAGED_BINARY_DIR="$root/lib/aks-flex-node"
}

# The deprecated --install-dir / AKS_FLEX_NODE_INSTALL_DIR: the directory is
# the host's choice now, so a value naming another one is ignored, with a warning.
check_requested_install_dir() {
  local requested=${1%/}
  [[ -n "$1" ]] || return 0
  if [[ "$requested" == "$INSTALL_DIR" ]]; then
    say_warn "--install-dir is deprecated; the installer chooses the install directory"
  else
    say_warn "--install-dir $1 is deprecated and ignored: this host keeps the agent in $INSTALL_DIR"
  fi
}

# Whether $1 is the link the agent's blue/green layout makes: its text names the
# current link, which resolves to a regular executable blue or green slot.
is_managed_link() {
  local target=$1 resolved managed
  [[ -L "$target" ]] || return 1
  [[ "$(readlink -- "$target")" == "$MANAGED_BINARY_DIR/aks-flex-node-current" ]] || return 1
  resolved=$(readlink -e -- "$target") || return 1
  managed=$(readlink -f -- "$MANAGED_BINARY_DIR") || return 1
  [[ "$resolved" == "$managed/aks-flex-node-blue" || "$resolved" == "$managed/aks-flex-node-green" ]] || return 1
  [[ -f "$resolved" && -x "$resolved" ]]
}

agent_service_present() {
  [[ -e "$SERVICE_UNIT_PATH" || -L "$SERVICE_UNIT_PATH" ]] && return 0
  command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$SERVICE_UNIT"
}

# Installs $1 as $INSTALL_DIR/aks-flex-node: staged beside the target and
# renamed over it, under the lock the agent's blue/green switch takes, so an
# install never interleaves with an upgrade and a running binary is replaced
# atomically. Returns the EXIT_* status of a failure.
install_binary() {
  local source=$1 target="$INSTALL_DIR/aks-flex-node"
  say_info "Installing binary to $INSTALL_DIR..."
  if [[ -L "$INSTALL_DIR" || (-e "$INSTALL_DIR" && ! -d "$INSTALL_DIR") ]]; then
    say_error "Install path $INSTALL_DIR is not a regular directory"
    return "$EXIT_REFUSED"
  fi
  # Only a missing directory is created; `install -d` makes each missing
  # ancestor 0755 whatever the umask. An existing one keeps its mode and owner.
  if [[ ! -d "$INSTALL_DIR" ]] && ! install -d -o root -g root -m 0755 "$INSTALL_DIR"; then
    say_error "Failed to create install directory $INSTALL_DIR"
    return "$EXIT_FAILURE"
  fi
  (
    umask 077
    staged=
    trap '[[ -z "$staged" ]] || rm -f -- "$staged"' EXIT
    mkdir -p -- "$(dirname -- "$UPGRADE_LOCK")"
    exec 9>>"$UPGRADE_LOCK"
    # Root's alone, as the agent keeps it: a read bit is all flock(2) needs to
    # hold it. Through the descriptor, so the file changed is the one locked.
    chmod 0600 /proc/self/fd/9
    chown root:root /proc/self/fd/9
    if ! flock -n 9; then
      say_error "Agent binary activation is in progress; retry the installation"
      exit "$EXIT_TEMPORARY"
    fi
    if [[ -L "$target" ]]; then
      if ! is_managed_link "$target"; then
        # The guidance must not send root to anything that would execute the link.
        say_error "Refusing to replace the unexpected symbolic link at $target."
        say_error "Inspect and remove the link before rerunning this script; do not execute it as AKS Flex Node."
        exit "$EXIT_REFUSED"
      fi
      if agent_service_present; then
        say_error "Refusing to replace the managed symbolic link at $target while the agent service is installed or active."
        say_error "Use the agent upgrade flow, or run 'aks-flex-node reset' before rerunning this script."
        exit "$EXIT_REFUSED"
      fi
      # The layout reset keeps for a rejoin: removed, so the agent seeds it afresh.
      say_warn "Removing the managed binary layout retained after reset"
      rm -f -- "$target"
      rm -rf -- "$MANAGED_BINARY_DIR"
    fi
    if ! staged=$(mktemp "$INSTALL_DIR/.aks-flex-node.XXXXXX") ||
      ! install -o root -g root -m 0755 "$source" "$staged"; then
      say_error "Failed to stage binary in $INSTALL_DIR"
      exit "$EXIT_FAILURE"
    fi
    # -T: a directory at the target is an error, not a place to move into.
    if ! mv -fT -- "$staged" "$target"; then
      say_error "Failed to install binary to $target"
      exit "$EXIT_FAILURE"
    fi
    staged=
  ) || return $?
  say_success "Binary installed to $target"
}
# A URL as it may be printed: no user:password@ and no query or fragment,
# which may carry a signed token.
redact_url() { # URL
  local url=${1%%[?#]*}
  if [[ "$url" =~ ^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@(.*)$ ]]; then
    url="${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
  fi
  printf '%s\n' "$url"
}
# ---- end shared install logic

usage() {
  cat <<USAGE
usage: install.sh [--yes|-y] [--sha256 HEX] [--install-dir DIR]

  --sha256 HEX   the release archive's expected SHA-256 (AKS_FLEX_NODE_SHA256);
                 a download that does not match is refused with 65

Installs the AKS Flex Node agent binary. See the comment at the top of the
script for the environment it reads and its exit codes.
USAGE
}

parse_args() {
  REQUESTED_INSTALL_DIR=${AKS_FLEX_NODE_INSTALL_DIR:-}
  EXPECTED_SHA256=${AKS_FLEX_NODE_SHA256:-}
  while [[ $# -gt 0 ]]; do
    case "$1" in
      -y | --yes) ;; # accepted for compatibility: nothing prompts
      --sha256)
        if [[ $# -lt 2 || -z "$2" ]]; then
          say_error "--sha256 requires a value"
          exit "$EXIT_USAGE"
        fi
        EXPECTED_SHA256=$2
        shift
        ;;
      -h | --help)
        usage
        exit 0
        ;;
      --install-dir)
        if [[ $# -lt 2 || -z "$2" ]]; then
          say_error "--install-dir requires a value"
          exit "$EXIT_USAGE"
        fi
        REQUESTED_INSTALL_DIR=$2
        shift
        ;;
      *)
        say_error "unknown argument: $1"
        usage >&2
        exit "$EXIT_USAGE"
        ;;
    esac
    shift
  done
  if [[ -n "$EXPECTED_SHA256" && ! "$EXPECTED_SHA256" =~ ^[0-9a-fA-F]{64}$ ]]; then
    say_error "--sha256 (or AKS_FLEX_NODE_SHA256) must be 64 hexadecimal digits, got: $EXPECTED_SHA256"
    exit "$EXIT_USAGE"
  fi
}

# Advisory only: an untested distribution gets warnings, never a refusal.
check_os() {
  local id="" version="" pretty="" major key value
  if [[ ! -r /etc/os-release ]]; then
    say_warn "Cannot detect OS version - continuing installation"
    return 0
  fi
  while IFS='=' read -r key value; do
    value=${value#\"}
    value=${value%\"}
    case "$key" in
      ID) id=$value ;;
      VERSION_ID) version=$value ;;
      PRETTY_NAME) pretty=$value ;;
    esac
  done </etc/os-release
  major=${version%%.*}
  case "$id" in
    ubuntu) [[ "$version" == 22.04 || "$version" == 24.04 ]] && { say_info "Supported OS: $pretty"; return 0; } ;;
    azurelinux | azlinux) [[ "$major" == 3 ]] && { say_info "Supported OS: $pretty"; return 0; } ;;
    almalinux | rocky | rhel) [[ "$major" == 9 || "$major" == 10 ]] && { say_info "Supported OS: $pretty"; return 0; } ;;
  esac
  if command -v dnf >/dev/null 2>&1; then
    say_warn "OS ${pretty:-$id} is not tested, but dnf is available"
  else
    say_warn "OS ${pretty:-$id} is not tested"
  fi
  say_warn "Tested platforms: Ubuntu 22.04/24.04, Azure Linux 3, AlmaLinux/Rocky/RHEL 9 and 10"
  say_warn "Continuing, but support may be limited"
}

detect_arch() {
  local os
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  if [[ "$os" != linux ]]; then
    say_error "Unsupported operating system: $os (AKS Flex Node runs on Linux)"
    exit "$EXIT_UNSUPPORTED_HOST"
  fi
  case "$(uname -m)" in
    x86_64) ARCH=amd64 ;;
    aarch64) ARCH=arm64 ;;
    *)
      say_error "Unsupported architecture: $(uname -m) (expected x86_64 or aarch64)"
      exit "$EXIT_UNSUPPORTED_HOST"
      ;;
  esac
  say_info "Detected platform: linux/$ARCH"
}

# Downloads URL to FILE; on failure FETCH_ERROR holds the tool's own reason.
fetch_to() { # URL FILE
  local errors status=0
  FETCH_ERROR=
  errors=$(mktemp)
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL -o "$2" "$1" 2>"$errors" || status=$?
  elif command -v wget >/dev/null 2>&1; then
    wget -qO "$2" "$1" 2>"$errors" || status=$?
  else
    rm -f -- "$errors"
    say_error "Neither curl nor wget is installed"
    exit "$EXIT_UNSUPPORTED_HOST"
  fi
  FETCH_ERROR=$(tr -s '\n' ' ' <"$errors")
  FETCH_ERROR=${FETCH_ERROR% }
  rm -f -- "$errors"
  return "$status"
}

resolve_version() {
  local answer
  if [[ -n "${AKS_FLEX_NODE_VERSION:-}" ]]; then
    VERSION=$AKS_FLEX_NODE_VERSION
    return 0
  fi
  answer=$(mktemp)
  if fetch_to "https://api.github.com/repos/$GITHUB_REPO/releases/latest" "$answer"; then
    VERSION=$(sed -n 's/.*"tag_name"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$answer" | head -n 1)
  else
    VERSION=
  fi
  rm -f -- "$answer"
  if [[ -z "$VERSION" ]]; then
    say_error "Failed to get latest release information; set AKS_FLEX_NODE_VERSION to skip the lookup"
    exit "$EXIT_TEMPORARY"
  fi
  say_info "Latest version: $VERSION"
}

# Sets BINARY to the file to install, downloading the release archive into
# DOWNLOAD_DIR unless AKS_FLEX_NODE_LOCAL_BINARY names one.
obtain_binary() {
  local archive="aks-flex-node-linux-$ARCH.tar.gz" url
  if [[ -n "${AKS_FLEX_NODE_LOCAL_BINARY:-}" ]]; then
    if [[ ! -f "$AKS_FLEX_NODE_LOCAL_BINARY" ]]; then
      say_error "AKS_FLEX_NODE_LOCAL_BINARY is not a regular file: $AKS_FLEX_NODE_LOCAL_BINARY"
      exit "$EXIT_BAD_INPUT"
    fi
    BINARY=$AKS_FLEX_NODE_LOCAL_BINARY
    return 0
  fi
  DOWNLOAD_DIR=$(mktemp -d)
  if [[ -n "${AKS_FLEX_NODE_DOWNLOAD_URL:-}" ]]; then
    # The URL names the archive: the GitHub API is not asked for a version,
    # so a mirror works offline and a retrying unit does not loop on it.
    url=$AKS_FLEX_NODE_DOWNLOAD_URL
    # A custom URL may carry credentials or a signed query: only its redacted form is printed, on failure.
    say_info "Using custom AKS Flex Node download URL"
  else
    resolve_version
    url="https://github.com/$GITHUB_REPO/releases/download/$VERSION/$archive"
    say_info "Downloading $url"
  fi
  if ! fetch_to "$url" "$DOWNLOAD_DIR/$archive"; then
    say_error "Failed to download AKS Flex Node${VERSION:+ $VERSION} from $(redact_url "$url"): ${FETCH_ERROR:-no reason given}"
    exit "$EXIT_TEMPORARY"
  fi
  verify_digest "$DOWNLOAD_DIR/$archive" "$url"
  if ! tar -xzf "$DOWNLOAD_DIR/$archive" -C "$DOWNLOAD_DIR" "aks-flex-node-linux-$ARCH" 2>/dev/null ||
    [[ ! -f "$DOWNLOAD_DIR/aks-flex-node-linux-$ARCH" ]]; then
    say_error "Binary not found in archive (expected the member aks-flex-node-linux-$ARCH)"
    exit "$EXIT_BAD_INPUT"
  fi
  BINARY="$DOWNLOAD_DIR/aks-flex-node-linux-$ARCH"
}

# Checks the archive against --sha256 / AKS_FLEX_NODE_SHA256 when given,
# before anything is extracted from it.
verify_digest() { # ARCHIVE URL
  local actual
  [[ -n "$EXPECTED_SHA256" ]] || return 0
  actual=$(sha256sum "$1")
  actual=${actual%% *}
  if [[ "${actual,,}" != "${EXPECTED_SHA256,,}" ]]; then
    say_error "SHA-256 mismatch for the archive from $(redact_url "$2"): expected ${EXPECTED_SHA256,,}, got $actual"
    exit "$EXIT_BAD_INPUT"
  fi
  say_info "Archive SHA-256 verified: $actual"
}

setup_directories() {
  local dir
  for dir in "$CONFIG_DIR" "$DATA_DIR" "$LOG_DIR"; do
    install -d -o root -g root -m 0755 "$dir"
  done
  touch "$LOG_DIR/aks-flex-node.log"
  chown root:root "$LOG_DIR/aks-flex-node.log"
  chmod 0644 "$LOG_DIR/aks-flex-node.log"
}

print_next_steps() {
  # start runs this binary; once started, the agent runs from the host root
  # and removes a copy in /usr/local/bin, so later commands name the host
  # root's, which a host the agent linked to /usr/local also has.
  local bin="$INSTALL_DIR/aks-flex-node" agent="$HOST_ROOT/bin/aks-flex-node"
  cat <<NEXT

Next steps:
  1. Write $CONFIG_DIR/config.json (mode 0600), for example:
     {
       "azure": {
         "subscriptionId": "<subscription-id>",
         "resourceManagerEndpoint": "https://management.azure.com",
         "targetAgentPoolName": "<agent-pool>",
         "arc": { "enabled": true },
         "targetCluster": { "resourceId": "<cluster-resource-id>", "location": "<location>" }
       },
       "agent": { "logLevel": "info", "logDir": "$LOG_DIR" }
     }
  2. Start the agent:          $bin start --config $CONFIG_DIR/config.json
  3. Check it:                 $agent status
     Print the version:        $agent version

Directories: config $CONFIG_DIR, data $DATA_DIR, logs $LOG_DIR
Binary: $bin (the agent installs itself as $agent when it starts)

To uninstall:
  curl -fsSL https://raw.githubusercontent.com/$GITHUB_REPO/${VERSION:-main}/scripts/uninstall.sh | sudo bash -s -- --force
NEXT
}

main() {
  DOWNLOAD_DIR=
  VERSION=${AKS_FLEX_NODE_VERSION:-}
  parse_args "$@"
  echo "AKS Flex Node Installer"
  if [[ $EUID -ne 0 ]]; then
    say_error "This script must be run as root (use sudo)"
    exit "$EXIT_NOT_ROOT"
  fi
  trap '[[ -z "$DOWNLOAD_DIR" ]] || rm -rf -- "$DOWNLOAD_DIR"' EXIT
  check_os
  detect_arch
  obtain_binary
  resolve_install_dir
  check_requested_install_dir "$REQUESTED_INSTALL_DIR"
  install_binary "$BINARY" || exit $?
  if [[ ":$PATH:" != *":$INSTALL_DIR:"* ]]; then
    say_warn "$INSTALL_DIR is not in PATH; add it to PATH to run aks-flex-node without the full path."
  fi
  setup_directories
  print_next_steps
}

# Sourcing defines the functions without running anything; `curl … | bash`
# (an empty BASH_SOURCE) still reaches main.
if [[ "${BASH_SOURCE[0]:-$0}" == "$0" ]]; then
  main "$@"
fi
