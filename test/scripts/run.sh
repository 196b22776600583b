#!/usr/bin/env bash
# Runs every bats suite under test/scripts inside a private mount and network
# namespace whose /opt, /usr/local and /run are empty tmpfs mounts, so no test
# can touch the machine's real ones, nor its network: uninstall.sh removes
# interfaces, policy routes and nft tables.
set -euo pipefail

readonly script_name=test-scripts
here=$(cd "$(dirname "$0")" && pwd)
readonly here

main() {
  if [[ $(id -u) -ne 0 ]] || ! unshare -m -n true 2>/dev/null; then
    echo "$script_name: SKIPPED: needs root and unshare -m -n" >&2
    return 0
  fi
  # shellcheck disable=SC2016 # the script runs in the namespace's shell, which expands it
  unshare -m -n --propagation private bash -euo pipefail -c '
    for dir in /opt /usr/local /run; do mount -t tmpfs -o mode=0755 tmpfs "$dir"; done
    # Loopback of this namespace only, for the local stand-ins of the Azure services.
    ip link set lo up
    exec bats --print-output-on-failure "$0"' "$here"
}

main "$@"
