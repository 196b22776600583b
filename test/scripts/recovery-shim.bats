#!/usr/bin/env bats
# The recovery shim (systemd/aks-flex-node-recovery.sh), spec
# agentbinary 5.3, rendered with a temporary layout as the installer renders it.

bats_require_minimum_version 1.5.0
load test_helper

# A fake systemctl that logs its arguments; the agent unit is failed (is-active
# exits 3, is-failed 0), as it is when OnFailure= runs the shim, and the
# upgrade guard is not. RESET_STATUS sets the reset-failed step's status;
# GUARD_FAILED_STATUS and GUARD_RESULT make the guard the unit that failed.
fake_systemctl() {
  cat >"$FAKE_BIN/systemctl" <<FAKE
#!/usr/bin/env bash
echo "systemctl \$*" >>"$BATS_TEST_TMPDIR/calls"
[[ "\$1" == is-active ]] && exit \${AGENT_ACTIVE_STATUS:-3}
if [[ "\$1" == is-failed ]]; then
  [[ "\$3" == aks-flex-node-upgrade-guard.service ]] && exit \${GUARD_FAILED_STATUS:-1}
  exit \${AGENT_FAILED_STATUS:-0}
fi
[[ "\$1" == show ]] && { echo "\${GUARD_RESULT:-}"; exit 0; }
[[ "\$1" == reset-failed ]] && exit \${RESET_STATUS:-0}
exit 0
FAKE
  chmod +x "$FAKE_BIN/systemctl"
}

setup() {
  make_fake_bin
  fake_systemctl
  slot_dir="$BATS_TEST_TMPDIR/lib/aks-flex-node"
  signal="$BATS_TEST_TMPDIR/etc/agent-upgrade-signal.json"
  mkdir -p "$slot_dir" "$(dirname "$signal")"
  shim="$BATS_TEST_TMPDIR/recovery.sh"
  # Never this machine's /etc: the shim rewrites the agent unit for a Go last-good.
  unit_dir="$BATS_TEST_TMPDIR/units"
  mkdir -p "$unit_dir"
  echo 'this product unit' >"$unit_dir/aks-flex-node-agent.service"
  other_release_unit='[Unit] Description=the Go release agent unit (rendered)'
  sed -e "s#/usr/local/lib/aks-flex-node/aks-flex-node-last-good#$slot_dir/aks-flex-node-last-good#g" \
    -e "s#/etc/aks-flex-node/agent-upgrade-signal.json#$signal#g" \
    -e "s#/etc/systemd/system/aks-flex-node-agent.service#$unit_dir/aks-flex-node-agent.service#g" \
    -e "s#^@OTHER_RELEASE_AGENT_UNIT@\$#$other_release_unit#" \
    "${workspace:?}/systemd/aks-flex-node-recovery.sh" >"$shim"
  chmod +x "$shim"
}

last_good_binary() { # the last-good slot, also current: answers version; logs other calls, exits with $1
  cat >"$slot_dir/aks-flex-node-blue" <<BIN
#!/usr/bin/env bash
if [[ "\$1" == version ]]; then [[ "\${2:-}" == --json ]] && echo '{"capabilities":["api-v1"]}'; exit 0; fi
echo "last-good \$*" >>"$BATS_TEST_TMPDIR/calls"
exit ${1:-0}
BIN
  chmod +x "$slot_dir/aks-flex-node-blue"
  ln -sfn "$slot_dir/aks-flex-node-blue" "$slot_dir/aks-flex-node-last-good"
  [[ -L "$slot_dir/aks-flex-node-current" ]] || ln -s "$slot_dir/aks-flex-node-blue" "$slot_dir/aks-flex-node-current"
}

broken_slot() { # a slot that has the execute bit but does not run (torn), and the link $2 to it
  printf '\177ELF torn' >"$slot_dir/aks-flex-node-$1"
  chmod +x "$slot_dir/aks-flex-node-$1"
  ln -sfn "$slot_dir/aks-flex-node-$1" "$slot_dir/aks-flex-node-$2"
}

reinstall_line() { # what the shim prints as the command to run
  local arch=amd64
  case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; esac
  echo "aks-flex-node-recovery: reinstall the agent with: curl -fsSL --create-dirs -o /var/lib/aks-flex-node/aks-flex-node-linux-$arch.tar.gz https://github.com/Azure/AKSFlexNode/releases/latest/download/aks-flex-node-linux-$arch.tar.gz && tar --no-same-owner --no-same-permissions -xzf /var/lib/aks-flex-node/aks-flex-node-linux-$arch.tar.gz -C /var/lib/aks-flex-node && /var/lib/aks-flex-node/aks-flex-node-linux-$arch agent-upgrade && systemctl reset-failed aks-flex-node-agent.socket aks-flex-node-agent.service && systemctl start aks-flex-node-agent.socket && systemctl restart aks-flex-node-agent.service"
}

@test "agentbinary#5.3 the shipped script names the literals the installer rewrites" {
  run grep -c -e /usr/local/lib/aks-flex-node/aks-flex-node-last-good -e /etc/aks-flex-node/agent-upgrade-signal.json \
    "${workspace:?}/systemd/aks-flex-node-recovery.sh"
  [ "$status" -eq 0 ]
  [ "$output" -ge 2 ]
}

@test "agentbinary#5.3 without a signal an ordinary failure changes nothing and exits 0" {
  last_good_binary 0
  ln -sfn "$slot_dir/aks-flex-node-blue" "$slot_dir/aks-flex-node-current"
  run -0 "$shim"
  [ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "agentbinary#5.3 with a signal but no executable last-good it exits 1 and says so" {
  echo '{}' >"$signal"
  # current runs (the candidate): only last-good is missing.
  printf '#!/bin/sh\nexit 0\n' >"$slot_dir/aks-flex-node-green"
  chmod +x "$slot_dir/aks-flex-node-green"
  ln -s "$slot_dir/aks-flex-node-green" "$slot_dir/aks-flex-node-current"
  run -1 --separate-stderr "$shim"
  # shellcheck disable=SC2154 # bats sets $stderr for run --separate-stderr
  [[ "$stderr" == *"no executable last-known-good AKS Flex Node agent binary"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "agentbinary#5.3 with a signal it recovers, resets the start limit, then restarts without blocking" {
  echo '{}' >"$signal"
  last_good_binary 0
  run -0 "$shim"
  run grep -vE "is-active|is-failed" "$BATS_TEST_TMPDIR/calls"
  [ "${lines[0]}" = 'last-good recover-agent-upgrade --message upgraded daemon failed repeatedly; restored last-good binary' ]
  [ "${lines[1]}" = 'systemctl reset-failed aks-flex-node-agent.service' ]
  [ "${lines[2]}" = 'systemctl --no-block restart aks-flex-node-agent.service' ]
}

@test "agentbinary#5.3 every step runs after a failure, and the status is the last failing step's" {
  echo '{}' >"$signal"
  last_good_binary 7
  RESET_STATUS=3 run -3 "$shim"
  run -0 grep -vcE "is-active|is-failed" "$BATS_TEST_TMPDIR/calls"
  [ "$output" -eq 3 ]
}

@test "recovery shim: a daemon that is active and answers recovers itself; last-good is not run" {
  echo '{}' >"$signal"
  last_good_binary 0
  fake_command curl 0
  AGENT_ACTIVE_STATUS=0 run -0 "$shim"
  run -0 cat "$BATS_TEST_TMPDIR/calls"
  [[ "$output" == *"curl -fsS --max-time 5 --unix-socket /run/aks-flex-node/agent.sock"*"/v1/recovery"* ]]
  [[ "$output" != *"last-good recover-agent-upgrade"* ]]
}

@test "recovery shim: a daemon that does not answer falls back to last-good's recover-agent-upgrade" {
  echo '{}' >"$signal"
  last_good_binary 0
  fake_command curl 7
  AGENT_ACTIVE_STATUS=0 run -0 "$shim"
  run -0 cat "$BATS_TEST_TMPDIR/calls"
  [[ "$output" == *"last-good recover-agent-upgrade"* ]]
}

@test "recovery shim: the guard failed while the agent runs: the record says the guard failed and how" {
  echo '{}' >"$signal"
  last_good_binary 0
  AGENT_ACTIVE_STATUS=0 AGENT_FAILED_STATUS=1 GUARD_FAILED_STATUS=0 GUARD_RESULT=exit-code run -0 "$shim"
  run -0 grep 'recover-agent-upgrade' "$BATS_TEST_TMPDIR/calls"
  [ "$output" = 'last-good recover-agent-upgrade --message the upgrade guard failed (exit-code) before it judged the upgraded daemon; restored last-good binary' ]
}

@test "recovery shim: agent and guard both failed: the record keeps the agent's message" {
  echo '{}' >"$signal"
  last_good_binary 0
  GUARD_FAILED_STATUS=0 GUARD_RESULT=exit-code run -0 "$shim"
  run -0 grep 'recover-agent-upgrade' "$BATS_TEST_TMPDIR/calls"
  [ "$output" = 'last-good recover-agent-upgrade --message upgraded daemon failed repeatedly; restored last-good binary' ]
}

@test "issue28#7 without a signal, both slots broken: it fails, says so and names the reinstall command" {
  broken_slot blue last-good
  broken_slot green current
  run -1 --separate-stderr "$shim"
  # shellcheck disable=SC2154 # bats sets $stderr_lines for run --separate-stderr
  [ "${stderr_lines[0]}" = "aks-flex-node-recovery: no AKS Flex Node agent binary runs: neither current ($slot_dir/aks-flex-node-green) nor last-good ($slot_dir/aks-flex-node-blue) answers 'version'; nothing was restored" ]
  [ "${stderr_lines[1]}" = "$(reinstall_line)" ]
  [ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "issue28#7 with a signal, both slots broken: it fails before running either, and names the reinstall command" {
  echo '{}' >"$signal"
  broken_slot blue last-good
  broken_slot green current
  run -1 --separate-stderr "$shim"
  [[ "${stderr_lines[0]}" == *"no AKS Flex Node agent binary runs"*"nothing was restored" ]]
  [ "${stderr_lines[1]}" = "$(reinstall_line)" ]
  [ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "issue28#7 without a signal, a current binary that does not run is not an ordinary failure" {
  last_good_binary 0
  broken_slot green current
  run -1 --separate-stderr "$shim"
  [ "${stderr_lines[0]}" = "aks-flex-node-recovery: the current agent binary $slot_dir/aks-flex-node-green does not answer 'version' and no AgentUpgrade is pending, so last-good is not switched in; nothing was restored" ]
  [ "${stderr_lines[1]}" = "$(reinstall_line)" ]
}

@test "issue28#7 a recovery that leaves current not running fails the unit" {
  echo '{}' >"$signal"
  last_good_binary 0
  broken_slot green current
  run -1 --separate-stderr "$shim"
  [[ "${stderr_lines[0]}" == *"after the recovery the current agent binary $slot_dir/aks-flex-node-green still does not answer 'version'; nothing was restored" ]]
  run -0 grep -c 'recover-agent-upgrade' "$BATS_TEST_TMPDIR/calls"
}

# issue 22 #3: a current that cannot run, with no signal, stops the agent for
# good (systemd runs it through current), so it is no ordinary failure.
damage_current() { # dangling | directory | empty | not-executable
  case "$1" in
    dangling) ln -sfn "$slot_dir/aks-flex-node-green" "$slot_dir/aks-flex-node-current" ;;
    directory) mkdir -p "$slot_dir/aks-flex-node-green" ;;
    empty) install -m 0755 /dev/null "$slot_dir/aks-flex-node-green" ;;
    not-executable) printf '#!/bin/sh\n' >"$slot_dir/aks-flex-node-green" && chmod 0644 "$slot_dir/aks-flex-node-green" ;;
  esac
  ln -sfn "$slot_dir/aks-flex-node-green" "$slot_dir/aks-flex-node-current"
}

# last-good, as last_good_binary, whose recover-agent-upgrade also points
# current at it, as the real one does: the shim then sees current run again.
repointing_last_good() {
  last_good_binary 0
  cat >"$slot_dir/aks-flex-node-blue" <<BIN
#!/usr/bin/env bash
if [[ "\$1" == version ]]; then [[ "\${2:-}" == --json ]] && echo '{"capabilities":["api-v1"]}'; exit 0; fi
echo "last-good \$*" >>"$BATS_TEST_TMPDIR/calls"
[[ "\$1" == recover-agent-upgrade ]] && ln -sfn "$slot_dir/aks-flex-node-blue" "$slot_dir/aks-flex-node-current"
exit 0
BIN
}

@test "issue22#3 no signal, current dangling: last-good's recover-agent-upgrade repoints it, then the agent restarts" {
  repointing_last_good
  damage_current dangling
  run -0 "$shim"
  run -0 grep -vE "is-active|is-failed" "$BATS_TEST_TMPDIR/calls"
  [ "${lines[0]}" = "last-good recover-agent-upgrade --message the current link $slot_dir/aks-flex-node-current cannot run; pointed it at the last-good binary" ]
  [ "${lines[1]}" = 'systemctl reset-failed aks-flex-node-agent.service' ]
  [ "${lines[2]}" = 'systemctl --no-block restart aks-flex-node-agent.service' ]
}

@test "issue22#3 no signal, current names a directory, an empty file or a non-executable file: each is recovered" {
  repointing_last_good
  for damage in directory empty not-executable; do
    rm -rf "$slot_dir/aks-flex-node-green" "$BATS_TEST_TMPDIR/calls"
    damage_current "$damage"
    run -0 "$shim"
    run -0 grep -c 'last-good recover-agent-upgrade --message the current link' "$BATS_TEST_TMPDIR/calls"
    [ "$output" -eq 1 ]
  done
}

@test "issue22#3 no signal, current dangling and no runnable last-good: exits 1 and says so, nothing runs" {
  install -m 0755 /dev/null "$slot_dir/aks-flex-node-blue"
  ln -sfn "$slot_dir/aks-flex-node-blue" "$slot_dir/aks-flex-node-last-good"
  damage_current dangling
  run -1 --separate-stderr "$shim"
  [[ "$stderr" == *"no AKS Flex Node agent binary runs"*"nothing was restored"* ]]
  [ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "issue22#2 a corrupt signal goes to last-good's recover-agent-upgrade, which sets it aside; the shim exits with its status" {
  printf '{garbage' >"$signal"
  last_good_binary 0
  run -0 "$shim"
  run -0 grep -c 'last-good recover-agent-upgrade --message upgraded daemon failed repeatedly' "$BATS_TEST_TMPDIR/calls"
  [ "$output" -eq 1 ]
}

# issue 21 #4: a last-good that is another release (a Go one: `version`
# answers, `version --json` does not) writes no unit for itself. The shim
# writes the agent unit that release expects and reloads systemd before the
# restart, so it never starts under this product's confinement.
go_last_good() {
  cat >"$slot_dir/aks-flex-node-go" <<BIN
#!/usr/bin/env bash
if [[ "\$1" == version ]]; then [[ -z "\${2:-}" ]] && echo 'aks-flex-node v0.9.0-go' && exit 0; echo 'unknown flag: --json' >&2; exit 1; fi
echo "go-last-good \$*" >>"$BATS_TEST_TMPDIR/calls"
[[ "\$1" == recover-agent-upgrade ]] && ln -sfn "$slot_dir/aks-flex-node-go" "$slot_dir/aks-flex-node-current"
exit 0
BIN
  chmod +x "$slot_dir/aks-flex-node-go"
  ln -sfn "$slot_dir/aks-flex-node-go" "$slot_dir/aks-flex-node-last-good"
}

@test "issue21#4 a Go last-good: the shim writes that release's agent unit and reloads systemd before the restart" {
  echo '{}' >"$signal"
  last_good_binary 0
  go_last_good
  run -0 "$shim"
  run -0 cat "$unit_dir/aks-flex-node-agent.service"
  [ "$output" = "$other_release_unit" ]
  [ "$(stat -c %a "$unit_dir/aks-flex-node-agent.service")" = 644 ]
  run grep -vE "is-active|is-failed" "$BATS_TEST_TMPDIR/calls"
  [ "${lines[0]}" = 'go-last-good recover-agent-upgrade --message upgraded daemon failed repeatedly; restored last-good binary' ]
  [ "${lines[1]}" = 'systemctl daemon-reload' ]
  [ "${lines[2]}" = 'systemctl reset-failed aks-flex-node-agent.service' ]
  [ "${lines[3]}" = 'systemctl --no-block restart aks-flex-node-agent.service' ]
}

@test "issue21 hand-back: to a Go last-good the shim retires the socket (disable --now) and the guard, after the Go unit is loaded" {
  echo '{}' >"$signal"
  echo 'socket' >"$unit_dir/aks-flex-node-agent.socket"
  echo 'guard' >"$unit_dir/aks-flex-node-upgrade-guard.service"
  last_good_binary 0
  go_last_good
  run -0 "$shim"
  run -0 ls "$unit_dir"
  [ "$output" = aks-flex-node-agent.service ]
  run grep -E "daemon-reload|disable" "$BATS_TEST_TMPDIR/calls"
  [ "${lines[0]}" = 'systemctl daemon-reload' ]
  [ "${lines[1]}" = 'systemctl disable --now aks-flex-node-agent.socket' ]
  [ "${lines[2]}" = 'systemctl daemon-reload' ]
  [ "${#lines[@]}" -eq 3 ]
}

@test "issue21#4 this product's last-good writes its own units: the shim leaves the agent unit alone" {
  echo '{}' >"$signal"
  last_good_binary 0
  run -0 "$shim"
  run -0 cat "$unit_dir/aks-flex-node-agent.service"
  [ "$output" = 'this product unit' ]
  run -1 grep -c daemon-reload "$BATS_TEST_TMPDIR/calls"
  run -1 grep -c disable "$BATS_TEST_TMPDIR/calls"
}
