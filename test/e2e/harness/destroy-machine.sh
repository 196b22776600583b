#!/usr/bin/env bash
# Tears down one e2e machine from its directory alone: kills the container
# if it still runs, removes its cgroup, unmounts the overlay and removes the
# directory. It is a separate process, not code in the test worker, because
# the worker is exactly what may die first: vitest's watchdog SIGKILLs
# workers as soon as the main process exits on Ctrl-C, and a SIGKILL runs no
# handler.
#
# Usage: destroy-machine.sh DIR          tear down now
#        destroy-machine.sh --guard DIR  wait while the owner recorded in DIR
#                                        runs; tear down if it exits first,
#                                        return quietly once DIR is gone
#
# DIR/machine.json names the owner and the container's init, each as
# {pid, startTime}, so that a recycled pid is never killed.
set -euo pipefail

readonly script_name="${0##*/}"

log() {
  printf '%s: %s\n' "${script_name}" "$*" >&2
}

# Prints "STATE STARTTIME" for a pid; prints nothing when it is gone. The
# command name may hold spaces, so fields are counted after the last ')'.
read_stat() {
  local stat fields
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  read -r -a fields <<<"${stat##*) }"
  printf '%s %s\n' "${fields[0]}" "${fields[19]}"
}

# True while pid $1 runs (with start time $2, when given); a zombie counts
# as gone, since our own dead child stays one until its parent reaps it.
is_running() {
  local state="" start=""
  read -r state start <<<"$(read_stat "$1")"
  [[ -n ${state} && ${state} != [ZX] && (-z ${2:-} || ${start} == "$2") ]]
}

# Prints "PID STARTTIME" of a process named in the record, or nothing.
read_record() {
  jq -r --arg name "$2" '.[$name] // empty | "\(.pid) \(.startTime)"' "$1/machine.json" 2>/dev/null || true
}

# Prints the pid of every systemd-nspawn booting this disk. Found by its
# command line rather than the record, because an owner can die between
# starting nspawn and recording it.
find_nspawns() {
  local merged="$1" pid cmdline
  for pid in $(pgrep -x systemd-nspawn); do
    cmdline="$(tr '\0' '\n' <"/proc/${pid}/cmdline" 2>/dev/null)" || continue
    grep -qxF -- "--directory=${merged}" <<<"${cmdline}" && printf '%s\n' "${pid}"
  done
}

# Prints the container's init among nspawn's children: pid 1 of its own namespace.
find_init() {
  local child children=()
  read -r -a children <"/proc/$1/task/$1/children" 2>/dev/null || true
  for child in "${children[@]}"; do
    grep -qE '^NSpid:\s+[0-9]+\s+1$' "/proc/${child}/status" 2>/dev/null && printf '%s\n' "${child}"
  done
}

wait_until_gone() {
  local pid="$1" tenths="$2"
  while is_running "${pid}"; do
    ((tenths-- > 0)) || return 1
    sleep 0.1
  done
}

# Killing the container's init ends its whole pid namespace at once; nspawn
# then exits by itself and lets go of the overlay.
kill_containers() {
  local dir="$1" pid="" start="" init
  read -r pid start <<<"$(read_record "${dir}" leader)"
  if [[ -n ${pid} ]] && is_running "${pid}" "${start}"; then
    kill -KILL "${pid}" 2>/dev/null || true
  fi
  for pid in $(find_nspawns "${dir}/merged"); do
    for init in $(find_init "${pid}"); do
      kill -KILL "${init}" 2>/dev/null || true
    done
    if ! wait_until_gone "${pid}" 50; then
      kill -KILL "${pid}" 2>/dev/null || true
      wait_until_gone "${pid}" 50 || log "warning: nspawn ${pid} of ${dir} survived SIGKILL"
    fi
  done
}

# Removes the cgroup the harness made for this machine (machine-cgroup.ts),
# named after the machine's directory, in every hierarchy. A cgroup
# directory holds only kernel files and goes with rmdir, deepest first, once
# no process is left in it; the container's last processes may still be
# exiting just after the kill, hence the retries.
# A cgroup that stays busy is reported and left: it holds no files, and the
# teardown must still unmount and remove the machine.
remove_cgroups() {
  local name="$1" root dir tenths
  for root in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified /sys/fs/cgroup; do
    dir="${root}/aks-flex-node-e2e/${name}"
    [[ -d ${dir} ]] || continue
    tenths=50
    until find "${dir}" -depth -type d -exec rmdir {} + 2>/dev/null && [[ ! -d ${dir} ]]; do
      if ((tenths-- <= 0)); then
        log "warning: cgroup ${dir} still holds processes; left in place"
        break
      fi
      sleep 0.1
    done
  done
}

destroy_now() {
  local dir="$1"
  # One teardown at a time: the owner's handler, its guard and a sweep may
  # all arrive at once.
  exec 9>"$(dirname "${dir}")/.teardown.lock"
  flock 9
  [[ -d ${dir} ]] || return 0
  kill_containers "${dir}"
  remove_cgroups "${dir##*/}"
  if mountpoint -q "${dir}/merged"; then
    # Removing files through a mounted overlay would only write whiteouts
    # into its upper dir; keep everything for a later sweep instead.
    umount "${dir}/merged" || {
      log "error: cannot unmount ${dir}/merged; the next run's sweep retries"
      return 1
    }
  fi
  rm -rf --one-file-system "${dir}"
}

guard() {
  local dir="$1" pid="" start=""
  read -r pid start <<<"$(read_record "${dir}" owner)"
  [[ -n ${pid} ]] || {
    log "error: ${dir}/machine.json names no owner"
    return 1
  }
  while [[ -d ${dir} ]]; do
    if ! is_running "${pid}" "${start}"; then
      log "owner ${pid} of ${dir} is gone; tearing the machine down"
      destroy_now "${dir}"
      return
    fi
    sleep 0.5
  done
}

main() {
  case "${1:-}" in
    --guard)
      [[ $# -eq 2 ]] || { log "usage: ${script_name} [--guard] DIR"; exit 2; }
      guard "$2"
      ;;
    "" | -*)
      log "usage: ${script_name} [--guard] DIR"
      exit 2
      ;;
    *) destroy_now "$1" ;;
  esac
}

main "$@"
