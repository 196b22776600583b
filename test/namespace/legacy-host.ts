/** Scenario prelude shared by the daemon-level move suites. */

// A host an earlier release left: this build's blue/green layout under
// /usr/local (so current and last-good both know the host root), a regular
// copy in /usr/local/bin as install scripts seed it, and an agent unit that
// names /usr/local. The daemon runs by hand: a restart it queues stops it,
// and the script starts it again from what the unit names, as systemd would.
export const legacyHost = String.raw`
legacy_install
rm /usr/local/bin/aks-flex-node
cp "$BINARY" /usr/local/bin/aks-flex-node
mkdir -p /etc/systemd/system
printf '[Service]\nExecStart=/usr/local/lib/aks-flex-node/aks-flex-node-current agent --config /etc/aks-flex-node/config.json\n' \
  > /etc/systemd/system/aks-flex-node-agent.service
echo '{}' > /etc/cfg.json
unit_binary() { sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' /etc/systemd/system/aks-flex-node-agent.service; }
# LocalDNS as the Go agent library leaves it: its helper under /usr/local
# (0700) and a unit naming it, which this product never writes.
localdns_install() {
  mkdir -p /usr/local/libexec
  printf '#!/bin/sh\necho "localdns-network $*"\n' > /usr/local/libexec/unbounded-localdns-network
  chmod 0700 /usr/local/libexec/unbounded-localdns-network
  printf '[Unit]\nBefore=systemd-nspawn@kube1.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/usr/local/libexec/unbounded-localdns-network up --interface localdns\nExecStop=/usr/local/libexec/unbounded-localdns-network down\n[Install]\nWantedBy=multi-user.target\n' \
    > /etc/systemd/system/unbounded-localdns-network.service
}
localdns_helper() { sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' /etc/systemd/system/unbounded-localdns-network.service; }
pid=
run_daemon_until_exit_or_gate() { # prefix binary -> prints <prefix>_exited=<code> or <prefix>_gate=open
  local prefix=$1; shift
  "$1" agent --config /etc/cfg.json >>/tmp/daemon.log 2>&1 &
  pid=$!
  local deadline
  for ((deadline = SECONDS + 120; SECONDS < deadline; )); do
    if ! kill -0 "$pid" 2>/dev/null; then set +e; wait "$pid"; code=$?; set -e; echo "$prefix"_exited=$code; return 0; fi
    if gate_open; then
      echo "$prefix"_gate=open; return 0
    fi
    nap 0.1
  done
  echo "neither exited nor opened" >&2; cat /tmp/daemon.log >&2; return 1
}
trap '[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true' EXIT
`;
