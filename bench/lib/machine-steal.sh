# shellcheck shell=bash
# The hypervisor's share of this machine's CPU time, sourced by bench scripts.
# On a VM, time a core was wanted but given to another guest is "steal" in
# /proc/stat; a p99 of a few ms is a handful of late answers, and a stolen
# slice makes them late whatever the server under test does.

# CPU time so far, all cores, in ticks: the stolen part and the total, as
# "STOLEN TOTAL".
machine_ticks() {
  awk '/^cpu / { print $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat
}

# The stolen share, in percent to one decimal, between two machine_ticks
# readings; "null" when no time passed (for jq's --argjson).
steal_pct_between() { # "STOLEN TOTAL" "STOLEN TOTAL"
  local -a before after
  read -r -a before <<<"$1"
  read -r -a after <<<"$2"
  local total=$((after[1] - before[1]))
  if ((total <= 0)); then
    echo null
    return
  fi
  awk -v s=$((after[0] - before[0])) -v t="$total" 'BEGIN { printf "%.1f\n", s * 100 / t }'
}
