import { describe, expect, it } from 'vitest';
import { statusResponseSchema } from '@aks-flex-node/api';
import { lastJsonLine, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/hardening: ${unavailable}`);

// The daemon by hand, stopped at the end of the script whatever happened.
const startDaemon = String.raw`
echo '{}' > /etc/daemon-config.json
"$BINARY" agent --config /etc/daemon-config.json > /tmp/daemon.log 2>&1 &
daemon=$!
trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
wait_for_socket || { cat /tmp/daemon.log >&2; exit 1; }`;

describe.skipIf(unavailable !== undefined)('hardening on a private host', () => {
  it('issue12#1 an unprivileged user holding the old abstract guard name does not block the daemon', () => {
    // The guard before this issue was the abstract name below; any user could bind it.
    const run = runOnPrivateHost(String.raw`
      runuser -u nobody -- /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0aks-flex-node-daemon:/run/aks-flex-node/agent.sock")
print("bound", flush=True)
time.sleep(60)' > /tmp/squatter.out &
      squatter=$!
      for _ in $(seq 1 50); do grep -q bound /tmp/squatter.out && break; sleep 0.1; done
      grep -q bound /tmp/squatter.out
      ${startDaemon}
      "$BINARY" status --json
      kill "$squatter"`);
    expect(run.status, run.stderr).toBe(0);
    expect(statusResponseSchema.parse(lastJsonLine(run)).daemon.socket).toBe('self-bound');
  });

  it('issue12#1 nobody cannot open the guard file, and a second daemon is still refused with exit 4', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      echo "lock=$(stat -c '%a %U' /run/aks-flex-node/daemon.lock) dir=$(stat -c '%a %U' /run/aks-flex-node)"
      if runuser -u nobody -- flock -n /run/aks-flex-node/daemon.lock true 2>/dev/null; then echo nobody=locked; else echo nobody=refused; fi
      set +e; "$BINARY" agent --config /etc/daemon-config.json 2>/tmp/second.err; echo "second=$?"; set -e`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('lock=600 root dir=750 root');
    expect(run.stdout).toContain('nobody=refused');
    expect(run.stdout).toContain('second=4');
  });

  it('issue12#1 a killed daemon leaves no guard behind: the next one starts at once', () => {
    const run = runOnPrivateHost(String.raw`
      echo '{}' > /etc/daemon-config.json
      "$BINARY" agent --config /etc/daemon-config.json > /tmp/first.log 2>&1 &
      first=$!
      wait_for_socket
      kill -KILL "$first"; wait "$first" 2>/dev/null || true
      # The killed daemon's socket file stays; the new daemon replaces it once it holds the guard.
      rm /run/aks-flex-node/agent.sock
      ${startDaemon}
      "$BINARY" status --json`);
    expect(run.status, run.stderr).toBe(0);
    expect(statusResponseSchema.parse(lastJsonLine(run)).daemon.pid).toBeGreaterThan(0);
  });

  it('issue12#2 SIGTERM with a half-sent request pending: the daemon exits 0 within the grace bound', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      /usr/bin/python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX)
s.connect("/run/aks-flex-node/agent.sock")
s.sendall(b"POST /v1/host-root/migrate HTTP/1.1\r\nHost: agent\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pa")
print("half-sent", flush=True)
time.sleep(60)' > /tmp/client.out &
      client=$!
      for _ in $(seq 1 50); do grep -q half-sent /tmp/client.out && break; sleep 0.1; done
      start=$(date +%s%N)
      kill -TERM "$daemon"
      set +e; timeout 30 tail --pid="$daemon" -f /dev/null; wait "$daemon"; code=$?; set -e
      trap - EXIT
      end=$(date +%s%N)
      kill "$client" 2>/dev/null || true
      echo "exit=$code ms=$(( (end - start) / 1000000 ))"`);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const match = /exit=(\d+) ms=(\d+)/.exec(run.stdout);
    expect(match?.[1], run.stdout).toBe('0');
    // The grace period is 5 s; a daemon that waits on the client would hit the 30 s timeout.
    expect(Number(match?.[2])).toBeLessThan(10_000);
  });
});
