#!/usr/bin/env bash
# Recovery shim for aks-flex-node-agent.service, run by the OnFailure= unit
# of the agent and of its upgrade guard.
# It never edits the layout itself: the last-good binary's own
# recover-agent-upgrade does that under the activation lock. The literals
# below are rewritten to the host root's paths when the script is installed.
set -euo pipefail

readonly last_good_link=/usr/local/lib/aks-flex-node/aks-flex-node-last-good
readonly signal_file=/etc/aks-flex-node/agent-upgrade-signal.json
readonly agent_unit=aks-flex-node-agent.service
readonly agent_socket=/run/aks-flex-node/agent.sock
readonly script_name=aks-flex-node-recovery
readonly guard_unit=aks-flex-node-upgrade-guard.service

# What the upgrade record will say. The guard and the agent both start this
# unit on failure, so systemd names neither (no MONITOR_UNIT); their states
# tell. A failed guard beside an agent that has not failed means the guard
# could not judge the upgraded daemon, which is then rolled back unjudged.
describe_failure() {
  local guard_result
  if systemctl is-failed --quiet "$guard_unit" && ! systemctl is-failed --quiet "$agent_unit"; then
    guard_result=$(systemctl show --property=Result --value "$guard_unit" || true)
    echo "the upgrade guard failed (${guard_result:-unknown result}) before it judged the upgraded daemon; restored last-good binary"
  else
    echo "upgraded daemon failed repeatedly; restored last-good binary"
  fi
}

# Asks a running daemon to recover, with a short timeout. Only a daemon that
# is active is asked: connecting to the socket of a failed one would make
# systemd try to start it again through socket activation.
ask_daemon() {
  systemctl is-active --quiet "$agent_unit" || return 1
  command -v curl >/dev/null 2>&1 || return 1
  curl -fsS --max-time 5 --unix-socket "$agent_socket" -H 'content-type: application/json' \
    -d "{\"message\":\"$recovery_message\"}" http://localhost/v1/recovery >/dev/null
}

main() {
  local last_good recovery_message status=0
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
  recovery_message=$(describe_failure)
  # A daemon that answers recovers and restarts itself, under its own lock.
  if ask_daemon; then
    exit 0
  fi
  # Each step runs even when an earlier one failed; the exit status is the last failure's.
  "$last_good" recover-agent-upgrade --message "$recovery_message" || status=$?
  # Clears the start-limit counter, or the restart below would be refused.
  systemctl reset-failed "$agent_unit" || status=$?
  # Only enqueue: this runs inside a job the agent's failure started, and waiting
  # on the agent's restart job from here would deadlock.
  systemctl --no-block restart "$agent_unit" || status=$?
  exit "$status"
}

main "$@"
