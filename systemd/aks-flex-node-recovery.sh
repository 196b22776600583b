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
readonly agent_socket_unit=aks-flex-node-agent.socket
readonly agent_socket=/run/aks-flex-node/agent.sock
readonly script_name=aks-flex-node-recovery
readonly guard_unit=aks-flex-node-upgrade-guard.service
readonly socket_unit=aks-flex-node-agent.socket
# Beside last-good, by the layout's names; derived so the installer's
# rewrite of the one literal above moves both.
readonly current_link=${last_good_link%-last-good}-current
readonly state_dir=/var/lib/aks-flex-node
readonly release_url=https://github.com/Azure/AKSFlexNode/releases/latest/download
# The agent unit, rewritten below when last-good is another release.
readonly agent_unit_file=/etc/systemd/system/aks-flex-node-agent.service

# The agent unit as another release (a Go one) writes it, rendered with this
# host's paths when the script is installed. Such a last-good writes no unit
# for itself when its recover-agent-upgrade switches it in, and it must never
# run under this product's confinement: it writes /var/lib/machines and
# /usr/local and reaches /dev, as it always could.
other_release_agent_unit() {
  cat <<'UNIT'
@OTHER_RELEASE_AGENT_UNIT@
UNIT
}

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

# Whether the binary a link names answers `version`: an executable bit says
# nothing of a truncated or foreign file.
# An empty file is refused first: execvp hands one to /bin/sh, which "runs" it.
runs() {
  local binary
  is_runnable "$1" || return 1
  binary=$(readlink -f "$1") || return 1
  timeout 10 "$binary" version >/dev/null 2>&1
}

# What an operator runs, as printed, when no agent binary runs; the same as
# reinstallCommand in shared/layout (a unit test compares them).
reinstall_command() {
  local arch member archive
  case "$(uname -m)" in
    aarch64 | arm64) arch=arm64 ;;
    *) arch=amd64 ;;
  esac
  member=aks-flex-node-linux-${arch}
  archive=${state_dir}/${member}.tar.gz
  echo "curl -fsSL --create-dirs -o ${archive} ${release_url}/${member}.tar.gz && tar --no-same-owner --no-same-permissions -xzf ${archive} -C ${state_dir} && ${state_dir}/${member} agent-upgrade && systemctl reset-failed ${agent_socket_unit} ${agent_unit} && systemctl start ${agent_socket_unit} && systemctl restart ${agent_unit}"
}

# Whether the binary a link names is this product: only its `version --json`
# announces the api-v1 capability; a Go release has no --json.
is_this_product() {
  local binary
  binary=$(readlink -f "$1") || return 1
  timeout 10 "$binary" version --json 2>/dev/null | tail -n 1 | grep -q '"api-v1"'
}

# Before the restart into another release: its own agent unit, by a temp
# file and a rename, then a reload. This product's last-good wrote its
# units itself in recover-agent-upgrade.
write_other_release_unit() {
  local tmp
  tmp=$(mktemp "${agent_unit_file}.XXXXXX") || return 1
  if ! { other_release_agent_unit >"$tmp" && chmod 0644 "$tmp" && mv -f "$tmp" "$agent_unit_file"; }; then
    rm -f "$tmp"
    return 1
  fi
  systemctl daemon-reload
}

# Then the units only this product has (its socket, its upgrade guard): that
# release's units name neither and its reset removes neither, and a client
# connecting to the socket would start the agent unit through socket
# activation while a daemon runs that never accepts on it. Only once the
# agent unit no longer requires the socket (written and reloaded above):
# stopping a socket its service requires stops the service too. This
# product's next start writes them again.
retire_product_units() {
  local unit file changed=no
  for unit in "$socket_unit" "$guard_unit"; do
    file="${agent_unit_file%/*}/$unit"
    [[ -e "$file" ]] || continue
    if ! { { [[ $unit != "$socket_unit" ]] || systemctl disable --now "$unit"; } && rm -f "$file"; }; then
      echo "$script_name: could not retire $unit before handing the host to another release; run: systemctl disable --now $unit && rm -f $file && systemctl daemon-reload" >&2
      return 1
    fi
    changed=yes
  done
  [[ $changed == no ]] || systemctl daemon-reload
}

# Where a link leads, for messages: the binary, or the link itself when it dangles.
target_of() {
  readlink -f "$1" || echo "$1"
}

# Says why no runnable binary was restored and how to reinstall, then fails
# the unit: "Finished" would claim a recovery that did not happen.
fail_unrestored() {
  echo "$script_name: $1; nothing was restored" >&2
  echo "$script_name: reinstall the agent with: $(reinstall_command)" >&2
  exit 1
}

both_broken() {
  fail_unrestored "no AKS Flex Node agent binary runs: neither current ($(target_of "$current_link")) nor last-good ($(target_of "$last_good_link")) answers 'version'"
}

# Whether execve could run what a link names at all: a regular file with an
# execute bit that is not empty. A current that fails this (dangling, a
# directory, empty, not executable) stops systemd from starting the agent.
is_runnable() {
  local target
  target=$(readlink -f "$1" || true)
  [[ -n "$target" && -f "$target" && -x "$target" && -s "$target" ]]
}

main() {
  local last_good recovery_message status=0
  last_good=$(readlink -f "$last_good_link" || true)
  # An ordinary daemon failure, with no upgrade pending, must not change the
  # selected binary: only a pending or failed upgrade leaves the signal file.
  # It is still checked that the selected binary runs: one that does not
  # leaves the agent down for good, which this unit must not report as done.
  if [[ ! -f "$signal_file" ]]; then
    runs "$current_link" && exit 0
    runs "$last_good_link" || both_broken
    # A current that cannot even be executed is no ordinary failure: systemd
    # cannot start the agent until last-good's recover-agent-upgrade points
    # current at it (below). One that executes but does not answer is left
    # as it is: with no upgrade pending, nothing says last-good should run.
    if is_runnable "$current_link"; then
      fail_unrestored "the current agent binary $(target_of "$current_link") does not answer 'version' and no AgentUpgrade is pending, so last-good is not switched in"
    fi
    recovery_message="the current link $current_link cannot run; pointed it at the last-good binary"
  else
    if ! runs "$last_good_link"; then
      runs "$current_link" || both_broken
      echo "$script_name: no executable last-known-good AKS Flex Node agent binary at $last_good_link" >&2
      exit 1
    fi
    recovery_message=$(describe_failure)
  fi
  # A daemon that answers recovers and restarts itself, under its own lock.
  if ask_daemon; then
    exit 0
  fi
  # Each step runs even when an earlier one failed; the exit status is the last failure's.
  "$last_good" recover-agent-upgrade --message "$recovery_message" || status=$?
  if is_runnable "$current_link" && ! is_this_product "$current_link"; then
    if write_other_release_unit; then
      retire_product_units || status=$?
    else
      status=$?
    fi
  fi
  # Clears the start-limit counter, or the restart below would be refused.
  systemctl reset-failed "$agent_unit" || status=$?
  # Only enqueue: this runs inside a job the agent's failure started, and waiting
  # on the agent's restart job from here would deadlock.
  systemctl --no-block restart "$agent_unit" || status=$?
  # The recovery is done only if what current names now runs.
  runs "$current_link" || fail_unrestored "after the recovery the current agent binary $(target_of "$current_link") still does not answer 'version'"
  exit "$status"
}

main "$@"
