#!/usr/bin/env bash
# Recovery shim for aks-flex-node-agent.service, run by its OnFailure= unit.
# It never edits the layout itself: the last-good binary's own
# recover-agent-upgrade does that under the activation lock. The literals
# below are rewritten to the host root's paths when the script is installed.
set -euo pipefail

readonly last_good_link=/usr/local/lib/aks-flex-node/aks-flex-node-last-good
readonly signal_file=/etc/aks-flex-node/agent-upgrade-signal.json
readonly agent_unit=aks-flex-node-agent.service
readonly script_name=aks-flex-node-recovery

main() {
  local last_good status=0
  last_good=$(readlink -f "$last_good_link" || true)
  # An ordinary daemon failure, with no upgrade pending, must not change the
  # selected binary: only a pending or failed upgrade leaves the signal file.
  if [[ ! -f "$signal_file" ]]; then
    exit 0
  fi
  if [[ -z "$last_good" || ! -x "$last_good" ]]; then
    echo "$script_name: no executable last-known-good AKS Flex Node agent binary at $last_good_link" >&2
    exit 1
  fi
  # Each step runs even when an earlier one failed; the exit status is the last failure's.
  "$last_good" recover-agent-upgrade --message "upgraded daemon failed repeatedly; restored last-good binary" || status=$?
  # Clears the start-limit counter, or the restart below would be refused.
  systemctl reset-failed "$agent_unit" || status=$?
  # Only enqueue: this runs inside a job the agent's failure started, and waiting
  # on the agent's restart job from here would deadlock.
  systemctl --no-block restart "$agent_unit" || status=$?
  exit "$status"
}

main "$@"
