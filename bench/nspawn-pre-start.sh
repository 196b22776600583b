#!/usr/bin/env bash
# The nspawn pre-start hook's cost against the least a client can do: curl
# sending the same request (POST /v1/nspawn-machines/kube1/hooks) over the
# same Unix socket to the same daemon, measured in the same run, as a ratio
# (DESIGN.md 4). The hook runs at every machine start and must stay a small
# client: it loads neither fastify nor pino (DESIGN.md 3). `version` is shown
# too: the executable's start-up floor, which every role pays.
# The daemon runs in private mount and network namespaces (tmpfs over /opt,
# /usr/local, /run, /var/lib; an overlay over /etc), so the bench touches
# nothing of the machine's. Needs root. Uses hyperfine when it is installed,
# otherwise an interleaved timing loop.
# Usage: bash bench/nspawn-pre-start.sh [binary]   (RUNS=30, OUT=dist/bench-nspawn-pre-start.json)
set -euo pipefail

readonly script_name=bench-nspawn-pre-start
workspace=$(cd "$(dirname "$0")/.." && pwd)
readonly workspace
binary=$(readlink -f "${1:-$workspace/dist/aks-flex-node}")
readonly binary
readonly runs=${RUNS:-30}
readonly out=${OUT:-$workspace/dist/bench-nspawn-pre-start.json}
readonly sock=/run/aks-flex-node/agent.sock
readonly url=http://agent/v1/nspawn-machines/kube1/hooks

die() {
  echo "$script_name: $*" >&2
  exit 1
}

# Runs inside the private namespaces: a throwaway host for the daemon.
private_host() { # scratch
  mount --make-rprivate /
  mkdir -p "$1/etc-upper" "$1/etc-work"
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc-upper,workdir=$1/etc-work" /etc
  local dir
  for dir in /opt /usr/local /run /var/lib; do mount -t tmpfs -o mode=0755 tmpfs "$dir"; done
  mkdir -p /usr/local/bin
}

wait_for_socket() {
  local _
  for _ in $(seq 1 100); do [[ -S $sock ]] && return 0; sleep 0.1; done
  die "the daemon's socket never appeared; its log: $(cat "$1")"
}

run_hook() { "$binary" nspawn-lifecycle pre-start kube1 2>/dev/null; }
run_curl() {
  curl -sf -o /dev/null --unix-socket "$sock" -X POST -H 'content-type: application/json' -d '{}' "$url"
}
run_version() { "$binary" version >/dev/null; }

now_ns() { date +%s%N; }

# Milliseconds per run of each client, interleaved so load on the machine hits all alike.
timing_loop() { # times-file
  local i t0 t1 t2 t3
  for i in $(seq 1 "$runs"); do
    t0=$(now_ns)
    run_hook
    t1=$(now_ns)
    run_curl
    t2=$(now_ns)
    run_version
    t3=$(now_ns)
    echo "$i $(((t1 - t0) / 1000)) $(((t2 - t1) / 1000)) $(((t3 - t2) / 1000))" >>"$1"
  done
}

# Mean and median in ms of one column (microseconds) of the times file.
stats() { # file column
  sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c; s += $c } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f %.2f\n", s / NR / 1000, m / 1000 }'
}

measure() { # scratch
  local times=$1/times method
  if command -v hyperfine >/dev/null; then
    method=hyperfine
    export -f run_hook run_curl run_version
    export binary sock url
    hyperfine --warmup 3 --runs "$runs" --shell=bash --export-json "$1/hyperfine.json" \
      -n pre-start run_hook -n curl run_curl -n version run_version >&2
    paste <(seq 1 "$runs") \
      <(jq -r '.results[0].times[] * 1000000 | floor' "$1/hyperfine.json") \
      <(jq -r '.results[1].times[] * 1000000 | floor' "$1/hyperfine.json") \
      <(jq -r '.results[2].times[] * 1000000 | floor' "$1/hyperfine.json") | tr '\t' ' ' >"$times"
  else
    method=timing-loop
    run_hook && run_curl && run_version # warm the page cache
    timing_loop "$times"
  fi
  local hook curl version
  read -r -a hook <<<"$(stats "$times" 2)"
  read -r -a curl <<<"$(stats "$times" 3)"
  read -r -a version <<<"$(stats "$times" 4)"
  printf '%-28s %8s %10s %16s\n' client mean_ms median_ms ratio_to_curl
  printf '%-28s %8.2f %10.2f %16.2f\n' "curl --unix-socket" "${curl[0]}" "${curl[1]}" 1
  printf '%-28s %8.2f %10.2f %16.2f\n' "nspawn-lifecycle pre-start" "${hook[0]}" "${hook[1]}" "$(jq -n "${hook[0]} / ${curl[0]}")"
  printf '%-28s %8.2f %10.2f %16.2f\n' "version (start-up floor)" "${version[0]}" "${version[1]}" "$(jq -n "${version[0]} / ${curl[0]}")"
  mkdir -p "$(dirname "$out")"
  jq -n --arg method "$method" --argjson runs "$runs" --arg binary "$binary" \
    --argjson hook_mean "${hook[0]}" --argjson hook_median "${hook[1]}" \
    --argjson curl_mean "${curl[0]}" --argjson curl_median "${curl[1]}" \
    --argjson version_mean "${version[0]}" --argjson version_median "${version[1]}" \
    '{bench: "nspawn-pre-start", method: $method, runs: $runs, binary: $binary,
      request: "POST /v1/nspawn-machines/kube1/hooks",
      results: {
        curl: {mean_ms: $curl_mean, median_ms: $curl_median},
        "pre-start": {mean_ms: $hook_mean, median_ms: $hook_median},
        version: {mean_ms: $version_mean, median_ms: $version_median}},
      ratio_pre_start_to_curl: ($hook_mean / $curl_mean),
      ratio_version_to_curl: ($version_mean / $curl_mean)}' >"$out"
  echo "wrote $out ($method, $runs runs)"
}

inside() {
  local scratch daemon
  scratch=$(mktemp -d /var/tmp/aks-flex-node-bench-nspawn.XXXXXX)
  private_host "$scratch"
  echo '{}' >/etc/bench-config.json
  "$binary" agent --config /etc/bench-config.json >"$scratch/daemon.log" 2>&1 &
  daemon=$!
  # shellcheck disable=SC2064 # expand now: the trap must stop this daemon and remove this directory
  trap "kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null; umount /etc 2>/dev/null; rm -rf '$scratch'" EXIT
  wait_for_socket "$scratch/daemon.log"
  # The first request writes the hooks; every measured one finds them current.
  run_curl || die "the daemon refused the request; its log: $(cat "$scratch/daemon.log")"
  measure "$scratch"
}

main() {
  [[ $(id -u) -eq 0 ]] || die "needs root (private mount namespaces, the daemon)"
  [[ -x $binary ]] || die "$binary is missing; run ./run build"
  command -v curl >/dev/null || die "curl is missing"
  if [[ ${BENCH_NSPAWN_INSIDE:-} != 1 ]]; then
    BENCH_NSPAWN_INSIDE=1 exec unshare -m -n --propagation private bash "$0" "$binary"
  fi
  inside
}

main "$@"
