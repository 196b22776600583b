#!/usr/bin/env bash
# bootstrap.sh: one-shot bootstrap of an AKS Flex Node host. In order: check
# the settings, download and verify the agent release archive, install the
# agent binary (as install.sh does), render the node config, run the agent's
# preflight when it has one, and start the node. Run it as root from a file,
# not through a pipe; on Ignition hosts the first-boot unit
# aks-flex-node-bootstrap.service runs it unchanged with an environment file.
#
# Every setting is an option or an AKS_FLEX_NODE_* environment variable; an
# option wins over the variable, and the variable over the base config:
#
#   AKS_FLEX_NODE_AUTH                      --auth MODE: arc, msi (managed-identity), service-principal (sp)
#   AKS_FLEX_NODE_MSI_CLIENT_ID             --msi-client-id ID
#   AKS_FLEX_NODE_SP_TENANT_ID              --sp-tenant-id ID (default: azure.tenantId of the config)
#   AKS_FLEX_NODE_SP_CLIENT_ID              --sp-client-id ID
#   AKS_FLEX_NODE_SP_CLIENT_SECRET_FILE     --sp-client-secret-file PATH
#   AKS_FLEX_NODE_SP_CLIENT_CERTIFICATE_FILE --sp-client-certificate-file PATH (PEM, or PKCS#12 named *.pfx)
#   AKS_FLEX_NODE_SP_CLIENT_SECRET          inline secret; environment only (arguments are visible to all)
#   AKS_FLEX_NODE_AGENT_URL                 --agent-url URL; may hold {{OS}} {{ARCH}} {{VERSION}} {{ARCHIVE_NAME}}
#   AKS_FLEX_NODE_AGENT_VERSION             --agent-version V (the release for the default GitHub URL)
#   AKS_FLEX_NODE_AGENT_SHA256              --agent-sha256 HEX (the archive's SHA-256)
#   AKS_FLEX_NODE_CLUSTER_RESOURCE_ID       --cluster-resource-id ID (azure.targetCluster.resourceId)
#   AKS_FLEX_NODE_AGENT_POOL_NAME           --agent-pool-name NAME (azure.targetAgentPoolName)
#   AKS_FLEX_NODE_RESOURCE_MANAGER_ENDPOINT --resource-manager-endpoint URL (azure.resourceManagerEndpoint)
#   AKS_FLEX_NODE_BOOTSTRAP_OCI_IMAGE       --bootstrap-oci-image SRC (bootstrap.ociImage)
#   AKS_FLEX_NODE_BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE --bootstrap-offline-artifacts-source SRC
#   AKS_FLEX_NODE_CONFIG_OVERRIDES          --config-overrides JSON (repeatable; env applied first)
#   AKS_FLEX_NODE_CONFIG_PATH               --config-path PATH (default /etc/aks-flex-node/config.json)
#   AKS_FLEX_NODE_BASE_CONFIG_FILE          a base config file instead of the embedded one
#   AKS_FLEX_NODE_INSTALL_DIR               --install-dir PATH: deprecated; ignored, with a warning,
#                                           unless it names the directory the host keeps the agent in
#   AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA      --fetch-bootstrap-data: fetch fresh join data from AKS
#                                           (true, 1, yes or y); the installed agent's fetch-bootstrap-data
#                                           calls listBootstrapData as the node's identity
#   AKS_FLEX_NODE_BOOTSTRAP_DATA_API_VERSION --bootstrap-data-api-version V (default 2026-05-02-preview)
#   AKS_FLEX_NODE_AUTHORITY_HOST            Entra ID for the fetch (default https://login.microsoftonline.com)
#   AKS_FLEX_NODE_IMDS_ENDPOINT             the managed identity endpoint the fetch uses (default
#                                           http://169.254.169.254/metadata/identity/oauth2/token)
#   AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS  plain-http endpoints for the fetch (local test servers only)
#
# Credentials go into the config (mode 0600) and are never logged, and every
# variable above is removed from the environment before the agent runs.
#
# Exit codes (shared/api/src/exit-codes.ts scriptExitCodes). Permanent, so a
# retry cannot help: 64 a setting was not understood; 65 the config, a
# credential file or the agent archive is wrong, or Azure refused the identity
# or the target of the bootstrap-data fetch (401, 403, 4xx); 69 the host
# cannot run the agent (architecture, a missing command); 77 not run as root;
# 78 the host's state refuses the install (a link at the binary's path, or the
# agent service is installed). Temporary: 75 the download or the fetch failed
# for a reason that may pass (network, 5xx, 429), or an agent activation holds
# the lock; 1 another step failed. A failing preflight or start ends the
# script with the agent's own status (0-15).
set -euo pipefail
umask 077

readonly HOST_ROOT="/opt/unbounded/agent"
readonly LEGACY_ROOT="/usr/local"
readonly UPGRADE_LOCK="/run/aks-flex-node-agent-upgrade.lock"
readonly SERVICE_UNIT="aks-flex-node-agent.service"
readonly SERVICE_UNIT_PATH="/etc/systemd/system/aks-flex-node-agent.service"
readonly DEFAULT_CONFIG_PATH="/etc/aks-flex-node/config.json"
readonly DEFAULT_RESOURCE_MANAGER_ENDPOINT="https://management.azure.com"
readonly DEFAULT_AUTHORITY_HOST="https://login.microsoftonline.com"
readonly DEFAULT_BOOTSTRAP_DATA_API_VERSION="2026-05-02-preview"
readonly GITHUB_RELEASES="https://github.com/Azure/AKSFlexNode/releases/download"

readonly EXIT_FAILURE=1
readonly EXIT_USAGE=64
readonly EXIT_BAD_INPUT=65
readonly EXIT_UNSUPPORTED_HOST=69
readonly EXIT_TEMPORARY=75
readonly EXIT_NOT_ROOT=77
readonly EXIT_REFUSED=78
# The agent's fetch-bootstrap-data exit codes (shared/api exitCodes): a remote
# service unreachable or failing for now, and one that refused the request.
readonly AGENT_EXIT_USAGE=2
readonly AGENT_EXIT_TEMPORARY=9
readonly AGENT_EXIT_DENIED=12

# Every variable the script reads, cleared before the agent runs.
readonly SETTINGS_VARS=(
  AUTH MSI_CLIENT_ID SP_TENANT_ID SP_CLIENT_ID SP_CLIENT_SECRET SP_CLIENT_SECRET_FILE
  SP_CLIENT_CERTIFICATE_FILE AGENT_URL AGENT_VERSION AGENT_SHA256 FETCH_BOOTSTRAP_DATA
  BOOTSTRAP_DATA_API_VERSION AUTHORITY_HOST IMDS_ENDPOINT ALLOW_INSECURE_TEST_ENDPOINTS
  CLUSTER_RESOURCE_ID AGENT_POOL_NAME RESOURCE_MANAGER_ENDPOINT BOOTSTRAP_OCI_IMAGE
  BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE CONFIG_OVERRIDES INSTALL_DIR CONFIG_PATH BASE_CONFIG_FILE
)

say_info() { echo "bootstrap: $*" >&2; }
say_success() { echo "bootstrap: $*" >&2; }
say_warn() { echo "bootstrap: warning: $*" >&2; }
say_error() { echo "bootstrap: error: $*" >&2; }

fatal() { # STATUS MESSAGE
  say_error "$2"
  exit "$1"
}

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
# The base config a publisher embeds: one line of compact JSON in place of the
# marker, so it cannot end the heredoc early.
embedded_base_config() {
  cat <<'BASE_CONFIG_JSON'
__AKS_FLEX_NODE_BASE_CONFIG_JSON__
BASE_CONFIG_JSON
}

usage() {
  cat <<'USAGE'
usage: bootstrap.sh [options]

Installs the AKS Flex Node agent, renders its config and starts the node.
Each option can also be given as the environment variable in brackets.

  --auth MODE                          arc, msi or service-principal [AKS_FLEX_NODE_AUTH]
  --msi-client-id ID                   [AKS_FLEX_NODE_MSI_CLIENT_ID]
  --sp-tenant-id ID                    [AKS_FLEX_NODE_SP_TENANT_ID]
  --sp-client-id ID                    [AKS_FLEX_NODE_SP_CLIENT_ID]
  --sp-client-secret-file PATH         [AKS_FLEX_NODE_SP_CLIENT_SECRET_FILE]
  --sp-client-certificate-file PATH    [AKS_FLEX_NODE_SP_CLIENT_CERTIFICATE_FILE]
                                       inline secret: [AKS_FLEX_NODE_SP_CLIENT_SECRET] only
  --agent-url URL                      [AKS_FLEX_NODE_AGENT_URL]
  --agent-version V                    [AKS_FLEX_NODE_AGENT_VERSION]
  --agent-sha256 HEX                   [AKS_FLEX_NODE_AGENT_SHA256]
  --cluster-resource-id ID             [AKS_FLEX_NODE_CLUSTER_RESOURCE_ID]
  --agent-pool-name NAME               [AKS_FLEX_NODE_AGENT_POOL_NAME]
  --resource-manager-endpoint URL      [AKS_FLEX_NODE_RESOURCE_MANAGER_ENDPOINT]
  --bootstrap-oci-image SRC            [AKS_FLEX_NODE_BOOTSTRAP_OCI_IMAGE]
  --bootstrap-offline-artifacts-source SRC
                                       [AKS_FLEX_NODE_BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE]
  --config-overrides JSON              repeatable [AKS_FLEX_NODE_CONFIG_OVERRIDES]
  --config-path PATH                   [AKS_FLEX_NODE_CONFIG_PATH]
                                       base config file: [AKS_FLEX_NODE_BASE_CONFIG_FILE]
  --install-dir PATH                   deprecated [AKS_FLEX_NODE_INSTALL_DIR]
  --fetch-bootstrap-data               fetch fresh join data from AKS as the node's identity
                                       [AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA]
  --bootstrap-data-api-version V       default 2026-05-02-preview
                                       [AKS_FLEX_NODE_BOOTSTRAP_DATA_API_VERSION]
                                       for the fetch, environment only:
                                       [AKS_FLEX_NODE_AUTHORITY_HOST] [AKS_FLEX_NODE_IMDS_ENDPOINT]
                                       [AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS]
  -h, --help                           this text
USAGE
}

# Reads the environment into shell variables and at once removes the values
# that may carry secrets or signed URLs, so no child inherits them.
read_environment() {
  AUTH=${AKS_FLEX_NODE_AUTH:-}
  MSI_CLIENT_ID=${AKS_FLEX_NODE_MSI_CLIENT_ID:-}
  SP_TENANT_ID=${AKS_FLEX_NODE_SP_TENANT_ID:-}
  SP_CLIENT_ID=${AKS_FLEX_NODE_SP_CLIENT_ID:-}
  SP_CLIENT_SECRET=${AKS_FLEX_NODE_SP_CLIENT_SECRET:-}
  SP_CLIENT_SECRET_FILE=${AKS_FLEX_NODE_SP_CLIENT_SECRET_FILE:-}
  SP_CLIENT_CERTIFICATE_FILE=${AKS_FLEX_NODE_SP_CLIENT_CERTIFICATE_FILE:-}
  AGENT_URL=${AKS_FLEX_NODE_AGENT_URL:-}
  AGENT_VERSION=${AKS_FLEX_NODE_AGENT_VERSION:-}
  AGENT_SHA256=${AKS_FLEX_NODE_AGENT_SHA256:-}
  FETCH_BOOTSTRAP_DATA=${AKS_FLEX_NODE_FETCH_BOOTSTRAP_DATA:-}
  BOOTSTRAP_DATA_API_VERSION=${AKS_FLEX_NODE_BOOTSTRAP_DATA_API_VERSION:-$DEFAULT_BOOTSTRAP_DATA_API_VERSION}
  AUTHORITY_HOST=${AKS_FLEX_NODE_AUTHORITY_HOST:-$DEFAULT_AUTHORITY_HOST}
  CLUSTER_RESOURCE_ID=${AKS_FLEX_NODE_CLUSTER_RESOURCE_ID:-}
  AGENT_POOL_NAME=${AKS_FLEX_NODE_AGENT_POOL_NAME:-}
  RESOURCE_MANAGER_ENDPOINT=${AKS_FLEX_NODE_RESOURCE_MANAGER_ENDPOINT:-}
  BOOTSTRAP_OCI_IMAGE=${AKS_FLEX_NODE_BOOTSTRAP_OCI_IMAGE:-}
  BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE=${AKS_FLEX_NODE_BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE:-}
  ENV_CONFIG_OVERRIDES=${AKS_FLEX_NODE_CONFIG_OVERRIDES:-}
  REQUESTED_INSTALL_DIR=${AKS_FLEX_NODE_INSTALL_DIR:-}
  CONFIG_PATH=${AKS_FLEX_NODE_CONFIG_PATH:-$DEFAULT_CONFIG_PATH}
  BASE_CONFIG_FILE=${AKS_FLEX_NODE_BASE_CONFIG_FILE:-}
  CLI_CONFIG_OVERRIDES=()
  unset AKS_FLEX_NODE_SP_CLIENT_SECRET AKS_FLEX_NODE_AGENT_URL AKS_FLEX_NODE_BOOTSTRAP_OCI_IMAGE \
    AKS_FLEX_NODE_BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE AKS_FLEX_NODE_CONFIG_OVERRIDES
}

parse_args() {
  local opt
  while [[ $# -gt 0 ]]; do
    opt=$1
    case "$opt" in
      -h | --help)
        usage
        exit 0
        ;;
      --fetch-bootstrap-data)
        FETCH_BOOTSTRAP_DATA=true
        shift
        continue
        ;;
      --)
        shift
        [[ $# -eq 0 ]] || fatal "$EXIT_USAGE" "unexpected positional arguments: $*"
        return 0
        ;;
      --auth | --msi-client-id | --sp-tenant-id | --sp-client-id | --sp-client-secret-file | \
        --sp-client-certificate-file | --agent-url | --agent-version | --agent-sha256 | \
        --bootstrap-data-api-version | --cluster-resource-id | --agent-pool-name | \
        --resource-manager-endpoint | --bootstrap-oci-image | --bootstrap-offline-artifacts-source | \
        --config-overrides | --install-dir | --config-path)
        [[ $# -ge 2 && -n "$2" ]] || fatal "$EXIT_USAGE" "$opt requires a value"
        ;;
      *) fatal "$EXIT_USAGE" "unknown option: $opt" ;;
    esac
    case "$opt" in
      --auth) AUTH=$2 ;;
      --msi-client-id) MSI_CLIENT_ID=$2 ;;
      --sp-tenant-id) SP_TENANT_ID=$2 ;;
      --sp-client-id) SP_CLIENT_ID=$2 ;;
      --sp-client-secret-file) # one credential: the flag replaces the others
        SP_CLIENT_SECRET_FILE=$2 SP_CLIENT_CERTIFICATE_FILE='' SP_CLIENT_SECRET='' ;;
      --sp-client-certificate-file)
        SP_CLIENT_CERTIFICATE_FILE=$2 SP_CLIENT_SECRET_FILE='' SP_CLIENT_SECRET='' ;;
      --agent-url) AGENT_URL=$2 ;;
      --agent-version) AGENT_VERSION=$2 ;;
      --agent-sha256) AGENT_SHA256=$2 ;;
      --bootstrap-data-api-version) BOOTSTRAP_DATA_API_VERSION=$2 ;;
      --cluster-resource-id) CLUSTER_RESOURCE_ID=$2 ;;
      --agent-pool-name) AGENT_POOL_NAME=$2 ;;
      --resource-manager-endpoint) RESOURCE_MANAGER_ENDPOINT=$2 ;;
      --bootstrap-oci-image) BOOTSTRAP_OCI_IMAGE=$2 ;;
      --bootstrap-offline-artifacts-source) BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE=$2 ;;
      --config-overrides) CLI_CONFIG_OVERRIDES+=("$2") ;;
      --install-dir) REQUESTED_INSTALL_DIR=$2 ;;
      --config-path) CONFIG_PATH=$2 ;;
    esac
    shift 2
  done
}

is_truthy() {
  case "${1,,}" in
    true | 1 | yes | y) return 0 ;;
    *) return 1 ;;
  esac
}

# Checks every setting that needs no download, so bad input fails before
# anything is fetched, installed or run.
check_settings() {
  if is_truthy "$FETCH_BOOTSTRAP_DATA"; then FETCHING=true; else FETCHING=false; fi
  AUTH=${AUTH,,}
  case "$AUTH" in
    "" | arc | msi | managed-identity | service-principal | sp) ;;
    *) fatal "$EXIT_USAGE" "unsupported auth mode: $AUTH (expected arc, msi, or service-principal)" ;;
  esac
  case "$AUTH" in
    arc | msi | managed-identity) ;;
    *)
      local set=0
      [[ -z "$SP_CLIENT_SECRET" ]] || set=$((set + 1))
      [[ -z "$SP_CLIENT_SECRET_FILE" ]] || set=$((set + 1))
      [[ -z "$SP_CLIENT_CERTIFICATE_FILE" ]] || set=$((set + 1))
      [[ $set -le 1 ]] || fatal "$EXIT_USAGE" "configure only one service-principal secret, secret file, or certificate file"
      ;;
  esac
  if [[ "$AUTH" == service-principal || "$AUTH" == sp ]]; then
    [[ -n "$SP_CLIENT_ID" ]] || fatal "$EXIT_USAGE" "service-principal auth requires --sp-client-id or AKS_FLEX_NODE_SP_CLIENT_ID"
    if [[ -n "$SP_CLIENT_CERTIFICATE_FILE" ]]; then
      check_credential_file client-certificate "$SP_CLIENT_CERTIFICATE_FILE"
    elif [[ -n "$SP_CLIENT_SECRET_FILE" ]]; then
      check_credential_file client-secret "$SP_CLIENT_SECRET_FILE"
    elif [[ -z "$SP_CLIENT_SECRET" ]]; then
      fatal "$EXIT_USAGE" "service-principal auth requires a protected secret file, certificate file, or AKS_FLEX_NODE_SP_CLIENT_SECRET"
    fi
  fi
  if [[ -z "$AGENT_URL" && -z "$AGENT_VERSION" ]]; then
    fatal "$EXIT_USAGE" "set --agent-url/AKS_FLEX_NODE_AGENT_URL or --agent-version/AKS_FLEX_NODE_AGENT_VERSION"
  fi
  if [[ -n "$AGENT_SHA256" && ! "$AGENT_SHA256" =~ ^[0-9a-fA-F]{64}$ ]]; then
    fatal "$EXIT_USAGE" "--agent-sha256 must be 64 hexadecimal digits"
  fi
  [[ "$CONFIG_PATH" == /* ]] || fatal "$EXIT_USAGE" "--config-path must be absolute: $CONFIG_PATH"
}

# A credential file the config will name: absolute, not a link, a regular
# file only root can read, and not empty.
check_credential_file() { # LABEL PATH
  local what="service-principal $1 file" path=$2
  [[ "$path" == /* ]] || fatal "$EXIT_BAD_INPUT" "$what path must be absolute"
  [[ ! -L "$path" ]] || fatal "$EXIT_BAD_INPUT" "$what must not be a symlink"
  [[ -f "$path" ]] || fatal "$EXIT_BAD_INPUT" "$what must be a regular file"
  [[ $((8#$(stat -c '%a' -- "$path") & 8#077)) -eq 0 ]] ||
    fatal "$EXIT_BAD_INPUT" "$what must not be accessible by group or other users"
  [[ -s "$path" ]] || fatal "$EXIT_BAD_INPUT" "$what is empty"
}

check_commands() {
  local cmd
  local required=(curl tar jq mktemp install find flock stat)
  [[ -z "$AGENT_SHA256" ]] || required+=(sha256sum)
  for cmd in "${required[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || fatal "$EXIT_UNSUPPORTED_HOST" "required command not found: $cmd"
  done
}

# The JSON settings, checked once jq is known to be there.
check_json_settings() {
  local overrides
  if [[ -n "$ENV_CONFIG_OVERRIDES" ]] &&
    ! jq -e 'type == "object"' >/dev/null 2>&1 <<<"$ENV_CONFIG_OVERRIDES"; then
    fatal "$EXIT_BAD_INPUT" "AKS_FLEX_NODE_CONFIG_OVERRIDES must be a JSON object"
  fi
  for overrides in "${CLI_CONFIG_OVERRIDES[@]}"; do
    jq -e 'type == "object"' >/dev/null 2>&1 <<<"$overrides" ||
      fatal "$EXIT_BAD_INPUT" "--config-overrides must be a JSON object"
  done
  if [[ -n "$BASE_CONFIG_FILE" ]]; then
    [[ -f "$BASE_CONFIG_FILE" ]] || fatal "$EXIT_BAD_INPUT" "base config file not found: $BASE_CONFIG_FILE"
    jq -e 'type == "object"' "$BASE_CONFIG_FILE" >/dev/null 2>&1 ||
      fatal "$EXIT_BAD_INPUT" "base config file must hold a JSON object: $BASE_CONFIG_FILE"
  elif [[ "$(embedded_base_config)" == __AKS_FLEX_NODE_*__ ]]; then
    [[ "$FETCHING" == true ]] ||
      fatal "$EXIT_BAD_INPUT" "embedded base config is not populated; use a generated script, a base config file (AKS_FLEX_NODE_BASE_CONFIG_FILE), or --fetch-bootstrap-data"
  elif ! embedded_base_config | jq -e 'type == "object"' >/dev/null 2>&1; then
    fatal "$EXIT_BAD_INPUT" "embedded base config must be a JSON object"
  fi
}

detect_arch() {
  case "$(uname -m)" in
    x86_64) ARCH=amd64 ;;
    aarch64) ARCH=arm64 ;;
    *) fatal "$EXIT_UNSUPPORTED_HOST" "unsupported architecture: $(uname -m)" ;;
  esac
}

# Downloads the archive to $WORK/agent.tar.gz. The URL goes to curl through
# its config on stdin, never on a command line other users can read, and is
# logged only without credentials and query: those may carry a SAS token.
download_agent() {
  local archive="aks-flex-node-linux-$ARCH.tar.gz" url quoted reason
  url=${AGENT_URL:-"$GITHUB_RELEASES/{{VERSION}}/{{ARCHIVE_NAME}}"}
  url=${url//'{{OS}}'/linux}
  url=${url//'{{ARCH}}'/$ARCH}
  url=${url//'{{VERSION}}'/$AGENT_VERSION}
  url=${url//'{{ARCHIVE_NAME}}'/$archive}
  quoted=${url//\\/\\\\}
  quoted=${quoted//\"/\\\"}
  say_info "downloading AKS Flex Node agent from $(redact_url "$url") (credentials and query redacted)"
  # curl's own reason (its message names no query) goes into the error.
  if ! printf 'url = "%s"\n' "$quoted" |
    curl -fsSL --retry 3 --retry-delay 2 -o "$WORK/agent.tar.gz" -K - 2>"$WORK/curl.err"; then
    reason=$(tr -s '\n' ' ' <"$WORK/curl.err")
    fatal "$EXIT_TEMPORARY" "failed to download AKS Flex Node agent from $(redact_url "$url"): ${reason:-curl gave no reason}"
  fi
}

# Checks the archive (digest, paths, the single Go-named member) and extracts
# the member; prints its path.
verify_and_extract() {
  local member="aks-flex-node-linux-$ARCH" listing entry actual
  if [[ -n "$AGENT_SHA256" ]]; then
    actual=$(sha256sum "$WORK/agent.tar.gz")
    actual=${actual%% *}
    [[ "${actual,,}" == "${AGENT_SHA256,,}" ]] ||
      fatal "$EXIT_BAD_INPUT" "agent archive SHA-256 mismatch: expected ${AGENT_SHA256,,} (--agent-sha256), got $actual"
  fi
  listing=$(tar -tzf "$WORK/agent.tar.gz" 2>/dev/null) ||
    fatal "$EXIT_BAD_INPUT" "agent download is not a readable tar.gz archive"
  while IFS= read -r entry; do
    if [[ "$entry" == /* || "$entry" == .. || "$entry" == ../* || "$entry" == */../* || "$entry" == */.. ]]; then
      fatal "$EXIT_BAD_INPUT" "agent archive contains an unsafe path"
    fi
  done <<<"$listing"
  if [[ "${listing#./}" != "$member" ]]; then
    fatal "$EXIT_BAD_INPUT" "agent archive must hold the single member $member"
  fi
  mkdir -m 0700 "$WORK/agent"
  tar -xzf "$WORK/agent.tar.gz" -C "$WORK/agent" --no-same-owner 2>/dev/null ||
    fatal "$EXIT_BAD_INPUT" "agent download is not a readable tar.gz archive"
  [[ -f "$WORK/agent/$member" && ! -L "$WORK/agent/$member" ]] ||
    fatal "$EXIT_BAD_INPUT" "agent binary not found in archive (expected the regular file $member)"
  echo "$WORK/agent/$member"
}

# Runs a jq filter over the config being rendered, in place.
edit_config() { # FILTER [jq options...]
  local filter=$1
  shift
  jq "$@" "$filter" "$RENDERED" >"$RENDERED.next"
  mv -f -- "$RENDERED.next" "$RENDERED"
}

# The jq filters, in quoted heredocs so that their $variables stay jq's.
jq_merge() {
  cat <<'JQ'
. * $o
JQ
}

# The fetched data arrives through a file, never jq's arguments: it holds a token.
jq_merge_file() {
  cat <<'JQ'
. * $f[0]
JQ
}

# The fetch's auth mode when --auth is not given: what the config holds.
jq_configured_auth() {
  cat <<'JQ'
if .azure.arc.enabled == true then "arc"
elif .azure.managedIdentity != null then "msi"
elif .azure.servicePrincipal != null then "service-principal"
else "" end
JQ
}

jq_targets() {
  cat <<'JQ'
.azure //= {}
| if $cluster != "" then .azure.targetCluster = ((.azure.targetCluster // {}) * {resourceId: $cluster}) else . end
| if $pool != "" then .azure.targetAgentPoolName = $pool else . end
| if $arm != "" then .azure.resourceManagerEndpoint = $arm else . end
JQ
}

jq_sources() {
  cat <<'JQ'
.bootstrap //= {}
| if $oci != "" then .bootstrap.ociImage = $oci else . end
| if $offline != "" then .bootstrap.offlineArtifacts = ((.bootstrap.offlineArtifacts // {}) * {source: $offline}) else . end
| if (.bootstrap.offlineArtifacts.source // "") != "" then
    .components //= {} | .networking //= {}
    | del(.components.containerd, .components.runc, .networking.cniVersion)
  else . end
JQ
}

jq_node_name() {
  cat <<'JQ'
if (.agent.nodeName // "") == "" then .agent.nodeName = $name else . end
JQ
}

jq_auth_arc() {
  cat <<'JQ'
del(.azure.managedIdentity, .azure.servicePrincipal)
| .azure.arc = ((.azure.arc // {}) * {enabled: true})
JQ
}

jq_auth_msi() {
  cat <<'JQ'
del(.azure.servicePrincipal)
| .azure.arc = ((.azure.arc // {}) * {enabled: false})
| .azure.managedIdentity = (if $id == "" then {} else {clientId: $id} end)
JQ
}

# The service principal is replaced whole: nothing of an earlier one is kept.
jq_auth_sp() {
  cat <<'JQ'
del(.azure.managedIdentity)
| .azure.arc = ((.azure.arc // {}) * {enabled: false})
| .azure.servicePrincipal = (
    {tenantId: (if $tenant != "" then $tenant else .azure.tenantId end), clientId: $client}
    + (if $file != "" then {clientSecretFile: $file} else {clientSecret: $secret} end))
JQ
}

apply_target_overrides() {
  edit_config "$(jq_targets)" \
    --arg cluster "$CLUSTER_RESOURCE_ID" --arg pool "$AGENT_POOL_NAME" --arg arm "$RESOURCE_MANAGER_ENDPOINT"
}

apply_auth_override() {
  local secret_file="$WORK/sp-client-secret" secret
  case "$AUTH" in
    "") ;;
    arc) edit_config "$(jq_auth_arc)" ;;
    msi | managed-identity) edit_config "$(jq_auth_msi)" --arg id "$MSI_CLIENT_ID" ;;
    service-principal | sp)
      # The inline secret reaches jq through a private file, never its arguments.
      secret=${SP_CLIENT_SECRET%$'\n'}
      secret=${secret%$'\r'}
      printf '%s' "$secret" >"$secret_file"
      edit_config "$(jq_auth_sp)" --arg tenant "$SP_TENANT_ID" --arg client "$SP_CLIENT_ID" \
        --arg file "${SP_CLIENT_CERTIFICATE_FILE:-$SP_CLIENT_SECRET_FILE}" --rawfile secret "$secret_file"
      rm -f -- "$secret_file"
      ;;
  esac
}

# Reads one string from the config being rendered; empty when null or missing.
config_value() { # JQ-PATH
  jq -r "$1 // \"\" | tostring" "$RENDERED"
}

# The credential arguments of a service-principal fetch, into FETCH_ARGS: the
# settings' certificate file, secret file or inline secret, else the config's
# secret file (its kind told by its content) or inline secret. A secret is
# handed over in a 0600 file of the private work dir, never as an argument.
add_sp_fetch_args() {
  local tenant client secret_file="$WORK/sp-fetch-secret" secret
  tenant=${SP_TENANT_ID:-$(config_value .azure.servicePrincipal.tenantId)}
  tenant=${tenant:-$(config_value .azure.tenantId)}
  client=${SP_CLIENT_ID:-$(config_value .azure.servicePrincipal.clientId)}
  [[ -n "$tenant" && -n "$client" ]] ||
    fatal "$EXIT_USAGE" "a service-principal bootstrap-data fetch needs a tenant and a client ID: set --sp-tenant-id and --sp-client-id, or azure.servicePrincipal in the base config"
  FETCH_ARGS+=(--sp-tenant-id "$tenant" --sp-client-id "$client")
  if [[ -n "$SP_CLIENT_CERTIFICATE_FILE" ]]; then
    FETCH_ARGS+=(--sp-client-certificate-file "$SP_CLIENT_CERTIFICATE_FILE")
  elif [[ -n "$SP_CLIENT_SECRET_FILE" ]]; then
    FETCH_ARGS+=(--sp-client-secret-file "$SP_CLIENT_SECRET_FILE")
  elif [[ -n "$SP_CLIENT_SECRET" || -n "$(config_value .azure.servicePrincipal.clientSecret)" ]]; then
    if [[ -n "$SP_CLIENT_SECRET" ]]; then
      secret=${SP_CLIENT_SECRET%$'\n'}
      secret=${secret%$'\r'}
      printf '%s' "$secret" >"$secret_file"
    else
      jq -j '.azure.servicePrincipal.clientSecret' "$RENDERED" >"$secret_file"
    fi
    FETCH_ARGS+=(--sp-client-secret-file "$secret_file")
  elif [[ -n "$(config_value .azure.servicePrincipal.clientSecretFile)" ]]; then
    FETCH_ARGS+=(--sp-client-credential-file "$(config_value .azure.servicePrincipal.clientSecretFile)")
  else
    fatal "$EXIT_USAGE" "service-principal bootstrap-data fetch requires a credential file: set --sp-client-secret-file, --sp-client-certificate-file or AKS_FLEX_NODE_SP_CLIENT_SECRET"
  fi
}

# Runs the installed agent's fetch-bootstrap-data for the target in $RENDERED
# and merges its answer over the config (spec scripts 3.6 step 4). The agent
# authenticates and calls AKS; the script hands it names, paths and
# endpoints, and AKS_FLEX_NODE_IMDS_ENDPOINT and
# AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS through the environment.
fetch_bootstrap_data() {
  local output="$WORK/bootstrap-data.json" cluster pool arm mode status=0
  cluster=$(config_value .azure.targetCluster.resourceId)
  pool=$(config_value .azure.targetAgentPoolName)
  arm=$(config_value .azure.resourceManagerEndpoint)
  [[ -n "$cluster" && -n "$pool" ]] ||
    fatal "$EXIT_USAGE" "fetching bootstrap data needs the target: set --cluster-resource-id and --agent-pool-name, or azure.targetCluster.resourceId and azure.targetAgentPoolName in the base config"
  mode=${AUTH:-$(jq -r "$(jq_configured_auth)" "$RENDERED")}
  FETCH_ARGS=(fetch-bootstrap-data --cluster-resource-id "$cluster" --agent-pool-name "$pool" --auth "$mode"
    --resource-manager-endpoint "${arm:-$DEFAULT_RESOURCE_MANAGER_ENDPOINT}" --authority-host "$AUTHORITY_HOST"
    --api-version "$BOOTSTRAP_DATA_API_VERSION" --output "$output")
  case "$mode" in
    arc) ;;
    msi | managed-identity)
      local client_id=${MSI_CLIENT_ID:-$(config_value .azure.managedIdentity.clientId)}
      [[ -z "$client_id" ]] || FETCH_ARGS+=(--msi-client-id "$client_id")
      ;;
    service-principal | sp) add_sp_fetch_args ;;
    "") fatal "$EXIT_USAGE" "fetching bootstrap data requires Arc, MSI, or service-principal authentication: set --auth, or azure.arc.enabled, azure.managedIdentity or azure.servicePrincipal in the base config" ;;
    *) fatal "$EXIT_USAGE" "fetching bootstrap data does not support auth mode: $mode" ;;
  esac
  say_info "fetching fresh bootstrap data from AKS RP"
  "$INSTALL_DIR/aks-flex-node" "${FETCH_ARGS[@]}" || status=$?
  rm -f -- "$WORK/sp-fetch-secret"
  case "$status" in
    0) ;;
    "$AGENT_EXIT_TEMPORARY")
      fatal "$EXIT_TEMPORARY" "failed to fetch AKS bootstrap data (agent status $status): a service could not be reached or failed for now (the error above names it); a retry may pass" ;;
    "$AGENT_EXIT_USAGE" | "$AGENT_EXIT_DENIED")
      fatal "$EXIT_BAD_INPUT" "failed to fetch AKS bootstrap data (agent status $status): the settings, the identity or its role on $cluster were refused (the error above says which); a retry fails the same way until they are fixed" ;;
    *) fatal "$EXIT_FAILURE" "failed to fetch AKS bootstrap data (agent status $status); the error above says why" ;;
  esac
  jq -e 'type == "object"' "$output" >/dev/null 2>&1 ||
    fatal "$EXIT_FAILURE" "failed to fetch AKS bootstrap data: the agent wrote no JSON object to $output"
  edit_config "$(jq_merge_file)" --slurpfile f "$output"
  rm -f -- "$output"
}

# Renders the config into $RENDERED, in the order of the Go releases (spec
# scripts 3.6): base, targets, the fetched data, generic overrides, targets
# again so explicit ones win over both, source overrides, offline
# normalization, node name, auth.
render_config() {
  local overrides node_name
  RENDERED="$WORK/config.json"
  if [[ -n "$BASE_CONFIG_FILE" ]]; then
    cat -- "$BASE_CONFIG_FILE" >"$RENDERED"
  elif [[ "$(embedded_base_config)" == __AKS_FLEX_NODE_*__ ]]; then
    # Only when fetching (check_json_settings refused it otherwise).
    say_info "embedded base config is not populated; starting from an empty config"
    echo '{}' >"$RENDERED"
  else
    embedded_base_config >"$RENDERED"
  fi
  apply_target_overrides
  [[ "$FETCHING" != true ]] || fetch_bootstrap_data
  if [[ -n "$ENV_CONFIG_OVERRIDES" ]]; then
    edit_config "$(jq_merge)" --argjson o "$ENV_CONFIG_OVERRIDES"
  fi
  for overrides in "${CLI_CONFIG_OVERRIDES[@]}"; do
    edit_config "$(jq_merge)" --argjson o "$overrides"
  done
  apply_target_overrides
  edit_config "$(jq_sources)" \
    --arg oci "$BOOTSTRAP_OCI_IMAGE" --arg offline "$BOOTSTRAP_OFFLINE_ARTIFACTS_SOURCE"
  node_name=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)
  edit_config "$(jq_node_name)" \
    --arg name "${node_name,,}"
  apply_auth_override
  jq -e 'type == "object"' "$RENDERED" >/dev/null || fatal "$EXIT_BAD_INPUT" "rendered config is not a JSON object"
  chmod 0600 "$RENDERED"
}

# Installs the rendered config root:root 0600 by a rename in its directory.
install_config() {
  local dir staged
  dir=$(dirname -- "$CONFIG_PATH")
  install -d -o root -g root -m 0755 "$dir"
  staged=$(mktemp "$dir/.config.json.XXXXXX")
  install -o root -g root -m 0600 "$RENDERED" "$staged"
  mv -f -- "$staged" "$CONFIG_PATH"
  say_info "rendered config at $CONFIG_PATH"
}

# Removes every setting from the shell and the environment before the agent
# runs, so the agent and its children see no secret or signed URL.
clear_settings() {
  local name
  SP_CLIENT_SECRET='' SP_CLIENT_SECRET_FILE='' SP_CLIENT_CERTIFICATE_FILE='' AGENT_URL=''
  ENV_CONFIG_OVERRIDES='' CLI_CONFIG_OVERRIDES=()
  for name in "${SETTINGS_VARS[@]}"; do
    unset "AKS_FLEX_NODE_$name"
  done
}

run_agent() {
  local agent="$INSTALL_DIR/aks-flex-node"
  # An agent without preflight (this release has none yet) is started directly.
  if "$agent" preflight --help >/dev/null 2>&1; then
    say_info "running preflight"
    "$agent" preflight --config "$CONFIG_PATH" --output text
  else
    say_info "the installed agent has no preflight command; skipping preflight"
  fi
  say_info "starting AKS Flex Node"
  umask 022
  "$agent" start --config "$CONFIG_PATH"
}

main() {
  local binary
  read_environment
  parse_args "$@"
  check_settings
  [[ $EUID -eq 0 ]] || fatal "$EXIT_NOT_ROOT" "run this script as root"
  check_commands
  check_json_settings
  detect_arch
  WORK=$(mktemp -d)
  chmod 0700 "$WORK"
  trap 'rm -rf -- "$WORK"' EXIT
  download_agent
  binary=$(verify_and_extract)
  resolve_install_dir
  check_requested_install_dir "$REQUESTED_INSTALL_DIR"
  install_binary "$binary" || exit $?
  say_info "installed agent at $INSTALL_DIR/aks-flex-node"
  render_config
  install_config
  clear_settings
  run_agent
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
