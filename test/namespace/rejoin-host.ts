/** Bash helpers for scenarios that reset a host, rejoin it with the scripts and uninstall it. */

import path from 'node:path';

/** The checkout's scripts, as an operator downloads them. */
export const scriptsDir = path.resolve(import.meta.dirname, '../../scripts');

/** A literal `$` for bash parameter expansions inside String.raw templates. */
const D = '$';

/**
 * Defines, on a private host:
 * - `stage_parent`: the host's own /opt/unbounded (0750, an artifact);
 * - `parent_snapshot`: /opt/unbounded apart from the agent's paths (names,
 *   types, modes, digests), to compare before and after;
 * - `reset_leftovers`: every path reset removes that is still there;
 * - `agent_verdict`: which root holds a whole agent after a reset, `legacy`
 *   or `host-root`, or `half:<what is missing or stray>` when neither does
 *   or both do;
 * - `agent_daemons`: how many agent daemons run;
 * - `agent_leftovers`: every path of the agent still there after uninstall;
 * - `rejoin`: install.sh from the built binary, then the installed agent
 *   started by hand until it takes changes (following the restarts a move
 *   queues), printing `rejoin_dir=` and `rejoin_state=`, then stopped.
 */
export const rejoinHelpers = String.raw`
SCRIPTS=${scriptsDir}
stage_parent() {
  install -d -m 0750 /opt/unbounded
  install -d -m 0700 /opt/unbounded/artifacts
  echo '{"images":["pause:3.10"]}' > /opt/unbounded/artifacts/manifest.json
}
parent_snapshot() {
  find /opt/unbounded \( -path /opt/unbounded/agent -o -path /opt/unbounded/agent.staging \) -prune \
    -o -printf '%p %y %m %u\n' | sort
  find /opt/unbounded \( -path /opt/unbounded/agent -o -path /opt/unbounded/agent.staging \) -prune \
    -o -type f -exec sha256sum {} + | sort
}
present() { [ -e "$1" ] || [ -L "$1" ]; }
reset_leftovers() {
  local p out=
  for p in /etc/systemd/system/aks-flex-node-agent.service /etc/systemd/system/aks-flex-node-agent.socket \
    /etc/systemd/system/aks-flex-node-agent-recovery.service /etc/systemd/system/aks-flex-node-upgrade-guard.service \
    /etc/systemd/system/aks-flex-node-bootstrap.service /etc/systemd/system/unbounded-localdns-network.service \
    /etc/aks-flex-node/agent-upgrade-signal.json /etc/aks-flex-node/host-root-agents \
    /opt/unbounded/agent.staging /opt/unbounded/agent/.moving; do
    present "$p" && out="$out $p"
  done
  for root in /opt/unbounded/agent /usr/local; do
    for p in lib/aks-flex-node/aks-flex-node-recovery.sh bin/unbounded-agent-nspawn-lifecycle \
      libexec/unbounded-localdns-network; do
      present "$root/$p" && out="$out $root/$p"
    done
  done
  echo "${D}{out# }"
}
# A whole agent under one root: its binary and the current and last-good
# slots run (a link at the binary and the slots' links resolved).
whole_at() { # root
  local f
  for f in bin/aks-flex-node lib/aks-flex-node/aks-flex-node-current lib/aks-flex-node/aks-flex-node-last-good; do
    "$1/$f" version >/dev/null 2>&1 || return 1
  done
}
any_at() { # root -> the agent's binaries and layout still under it
  local f
  for f in bin/aks-flex-node lib/aks-flex-node/aks-flex-node-blue lib/aks-flex-node/aks-flex-node-green \
    lib/aks-flex-node/aks-flex-node-current lib/aks-flex-node/aks-flex-node-last-good; do
    present "$1/$f" && printf '%s ' "$1/$f"
  done
  return 0
}
agent_verdict() {
  local opt=/opt/unbounded/agent legacy_whole=no root_whole=no stray
  whole_at /usr/local && legacy_whole=yes
  if [ -d "$opt" ] && [ ! -L "$opt" ] && whole_at "$opt"; then root_whole=yes; fi
  if [ "$legacy_whole" = yes ] && [ "$root_whole" = no ]; then
    # The host root may only be the migration link, or absent.
    if [ -L "$opt" ] && [ "$(readlink "$opt")" = /usr/local ]; then echo legacy; return; fi
    stray=$( [ -L "$opt" ] || any_at "$opt")
    if [ -z "$stray" ]; then echo legacy; else echo "half:host-root-holds:$stray"; fi
  elif [ "$root_whole" = yes ] && [ "$legacy_whole" = no ]; then
    stray=$(any_at /usr/local)
    if [ -z "$stray" ]; then echo host-root; else echo "half:legacy-holds:$stray"; fi
  else
    echo "half:legacy=$legacy_whole,host-root=$root_whole"
  fi
}
# Anchored at the start of the command line, so the scenario's own bash (whose
# command line holds this text) is not counted; and only in this mount
# namespace, since the process table is the machine's.
agent_daemons() {
  local p n=0 ours
  ours=$(readlink /proc/self/ns/mnt)
  for p in $(pgrep -f '^/[^ ]*aks-flex-node[^ ]* agent --config' || true); do
    [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$ours" ] && n=$((n + 1))
  done
  echo "$n"
}
agent_leftovers() {
  local p out=
  for p in /opt/unbounded/agent /opt/unbounded/agent.staging /usr/local/bin/aks-flex-node \
    /usr/local/lib/aks-flex-node /usr/local/bin/unbounded-agent-nspawn-lifecycle \
    /usr/local/libexec/unbounded-localdns-network /etc/aks-flex-node /var/lib/aks-flex-node \
    /var/log/aks-flex-node /etc/systemd/system/aks-flex-node-agent.service \
    /etc/systemd/system/aks-flex-node-agent-recovery.service; do
    present "$p" && out="$out $p"
  done
  echo "${D}{out# }"
}
rejoin_pid=
rejoin() {
  local out dir next code
  out=$(AKS_FLEX_NODE_LOCAL_BINARY="$BINARY" bash "$SCRIPTS/install.sh" 2>&1) || {
    echo "install.sh failed: $out" >&2; return 1; }
  dir=$(printf '%s\n' "$out" | sed -n 's|.*Binary installed to \(/[^ ]*\)/aks-flex-node.*|\1|p' | head -1)
  echo "rejoin_dir=$dir"
  mkdir -p /etc/aks-flex-node
  [ -f /etc/aks-flex-node/config.json ] || echo '{}' > /etc/aks-flex-node/config.json
  next="$dir/aks-flex-node"
  for _ in 1 2 3 4; do
    "$next" agent --config /etc/aks-flex-node/config.json >>/tmp/rejoin.log 2>&1 &
    rejoin_pid=$!
    code=
    local deadline
    for ((deadline = SECONDS + 120; SECONDS < deadline; )); do
      if ! kill -0 "$rejoin_pid" 2>/dev/null; then set +e; wait "$rejoin_pid"; code=$?; set -e; break; fi
      if gate_open; then
        code=open; break
      fi
      nap 0.1
    done
    [ "$code" = open ] && break
    # A move's pass 1 exits to be started again from the copy, as systemd would.
    [ "$code" = 0 ] || { echo "rejoined daemon ended with $code" >&2; tail -20 /tmp/rejoin.log >&2; return 1; }
    next=/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current
  done
  [ "$code" = open ] || { echo "the rejoined daemon never took changes" >&2; return 1; }
  echo "rejoin_state=$("$BINARY" status --json | jq -r .hostRoot.state)"
  kill -TERM "$rejoin_pid"; wait "$rejoin_pid" 2>/dev/null || true
}
# The end of every reset scenario: rejoin, then uninstall.sh as an operator
# runs it, and what of the agent it left.
rejoin_and_uninstall() {
  rejoin
  set +e; bash "$SCRIPTS/uninstall.sh" --force > /tmp/uninstall.out 2>&1; echo "uninstall_exit=$?"; set -e
  echo "after_uninstall_left=$(agent_leftovers)"
}
`;
