# shellcheck shell=bash
# A throwaway host for benchmarks that run the daemon, sourced by bench
# scripts. The caller re-execs itself under `unshare -m -n --propagation
# private`; inside, sandbox_start mounts tmpfs over /opt, /usr/local, /run and
# /var/lib and an overlay over /etc, so the daemon's layout, socket and state
# never touch the machine's (the pattern of bench/nspawn-pre-start.sh).
# Sets sandbox_scratch, sandbox_daemon (pid), sandbox_log; sandbox_stop undoes it.

readonly sandbox_socket=/run/aks-flex-node/agent.sock

sandbox_private_host() { # scratch
  mount --make-rprivate /
  mkdir -p "$1/etc-upper" "$1/etc-work"
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc-upper,workdir=$1/etc-work" /etc
  local dir
  for dir in /opt /usr/local /run /var/lib; do
    # With sandbox_opt_on_disk=1, /opt is a directory of the scratch's disk,
    # so the agent the daemon installs there is paged in as on a node's root
    # filesystem (tmpfs keeps its own pages).
    if [[ $dir == /opt && ${sandbox_opt_on_disk:-0} == 1 ]]; then
      mkdir -m 0755 "$1/opt"
      mount --bind "$1/opt" /opt
    else
      mount -t tmpfs -o mode=0755 tmpfs "$dir"
    fi
  done
  mkdir -p /usr/local/bin
}

# The nspawn machines of a node (kube1, kube2), each root filesystem with the
# copy of the agent the Go releases keep there (the kubelet's exec
# credential). The daemon keeps the active machine's copy equal to current
# and finds which machine that is by the copies' digests: a host without
# them measures less than a node does.
sandbox_lay_out_machines() { # binary
  local machine
  for machine in kube1 kube2; do
    install -D -m 0755 "$1" "/var/lib/machines/$machine/usr/local/bin/aks-flex-node"
    printf 'ID=ubuntu\nVERSION_ID="24.04"\n' | install -D -m 0644 /dev/stdin "/var/lib/machines/$machine/etc/os-release"
  done
}

sandbox_wait_for_socket() {
  local _
  for _ in $(seq 1 100); do
    [[ -S $sandbox_socket ]] && return 0
    kill -0 "$sandbox_daemon" 2>/dev/null || break
    sleep 0.1
  done
  echo "daemon-sandbox: the daemon's socket never appeared; its log: $(cat "$sandbox_log")" >&2
  return 1
}

# The agent unit's Environment= assignments (systemd/aks-flex-node-agent.service,
# or SANDBOX_AGENT_UNIT), one NAME=VALUE a line: the daemon runs with them as
# under systemd (glibc's malloc tunables change its memory). Quoting and
# several assignments on one line are refused rather than misread.
sandbox_unit_environment() {
  local unit=${SANDBOX_AGENT_UNIT:-$(dirname "${BASH_SOURCE[0]}")/../../systemd/aks-flex-node-agent.service}
  [[ -f $unit ]] || { echo "daemon-sandbox: no agent unit at $unit; set SANDBOX_AGENT_UNIT" >&2; return 1; }
  local line
  while IFS= read -r line; do
    if [[ ! $line =~ ^Environment=[A-Za-z_][A-Za-z0-9_]*=[^[:space:]\"\']*$ || $line == *\\* ]]; then
      echo "daemon-sandbox: $unit: cannot read '$line' (one unquoted NAME=VALUE a line)" >&2
      return 1
    fi
    echo "${line#Environment=}"
  done < <(grep '^Environment=' "$unit")
}

# Starts `binary agent --config /etc/bench-config.json` (config `{}`) in the
# private host, with the agent unit's environment, and waits until its socket
# exists. Extra arguments go before `agent`'s options are parsed: none today.
sandbox_start() { # binary
  sandbox_scratch=$(mktemp -d /var/tmp/aks-flex-node-bench.XXXXXX)
  sandbox_private_host "$sandbox_scratch"
  echo '{}' >/etc/bench-config.json
  sandbox_log=$sandbox_scratch/daemon.log
  sandbox_run_daemon "$1"
}

# Stops the daemon and starts it again the way its unit does, from the agent
# it installed under /opt at its first start: a node's daemon runs from
# there and copies nothing at start.
sandbox_restart_installed() {
  kill -TERM "$sandbox_daemon"
  wait "$sandbox_daemon" 2>/dev/null || true
  rm -f "$sandbox_socket"
  sandbox_run_daemon /opt/unbounded/agent/bin/aks-flex-node
}

# Runs `executable agent` with the agent unit's environment, its output
# added to sandbox_log, and waits until its socket exists.
sandbox_run_daemon() { # executable
  local environment
  environment=$(sandbox_unit_environment)
  # shellcheck disable=SC2086 # one NAME=VALUE a word, checked by sandbox_unit_environment
  env $environment "$1" agent --config /etc/bench-config.json >>"$sandbox_log" 2>&1 &
  sandbox_daemon=$!
  sandbox_wait_for_socket
}

sandbox_stop() {
  if [[ -n ${sandbox_daemon:-} ]]; then
    kill -TERM "$sandbox_daemon" 2>/dev/null || true
    wait "$sandbox_daemon" 2>/dev/null || true
  fi
  umount /etc 2>/dev/null || true
  [[ -n ${sandbox_scratch:-} ]] && rm -rf "$sandbox_scratch"
  return 0
}

# Resident memory of a process in MiB (VmRSS).
sandbox_rss_mib() { # pid
  awk '/^VmRSS:/ { printf "%.1f\n", $2 / 1024 }' "/proc/$1/status"
}

# Resident memory of a process in MiB as JSON: all of it, the anonymous part
# (heap, stacks: what the process itself allocated) and the file-backed part
# (pages of the executable mapped in, shared with the page cache).
sandbox_memory_json() { # pid
  awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
    END { printf "{\"rss\": %.1f, \"anon\": %.1f, \"file\": %.1f}\n", r / 1024, a / 1024, f / 1024 }' "/proc/$1/status"
}

# Voluntary context switches of every thread of a process: each is a wake-up
# after sleeping (a timer, a poll, a thread-pool worker), the idle cost.
sandbox_wakeups() { # pid
  cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt_switches:/ { s += $2 } END { print s }'
}
