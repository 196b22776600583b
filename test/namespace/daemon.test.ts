import { describe, expect, it } from 'vitest';
import { statusResponseSchema } from '@aks-flex-node/api';
import { lastJsonLine, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/daemon: ${unavailable}`);

// Starts the daemon by hand (no systemd: it serves without touching units)
// and stops it at the end of the script, whatever happened.
const startDaemon = String.raw`
echo '{}' > /etc/daemon-config.json
"$BINARY" agent --config /etc/daemon-config.json > /tmp/daemon.log 2>&1 &
daemon=$!
trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
wait_for_socket`;

describe.skipIf(unavailable !== undefined)('the daemon on a private host', () => {
  it('self-bound: answers status, with the directory 0750 and the socket 0600', () => {
    const run = runOnPrivateHost(`${startDaemon}
      echo "dir=$(stat -c %a /run/aks-flex-node) socket=$(stat -c %a /run/aks-flex-node/agent.sock)"
      "$BINARY" status
      "$BINARY" status --json`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('dir=750 socket=600');
    expect(run.stdout).toMatch(/^daemon: +running \(pid \d+/m);
    const status = statusResponseSchema.parse(lastJsonLine(run));
    expect(status.daemon.socket).toBe('self-bound');
    expect(status.hostRoot.state).toBe('installed');
  });

  it('passed socket: answers status over the descriptor systemd-socket-activate hands it', () => {
    const run = runOnPrivateHost(String.raw`
      echo '{}' > /etc/daemon-config.json
      mkdir -m 0750 -p /run/aks-flex-node
      systemd-socket-activate -l /run/aks-flex-node/agent.sock "$BINARY" agent --config /etc/daemon-config.json > /tmp/daemon.log 2>&1 &
      activator=$!
      trap 'kill -TERM "$activator" 2>/dev/null; wait "$activator" 2>/dev/null || true' EXIT
      wait_for_socket
      "$BINARY" status --json || { cat /tmp/daemon.log >&2; exit 1; }`);
    expect(run.status, run.stderr).toBe(0);
    expect(statusResponseSchema.parse(lastJsonLine(run)).daemon.socket).toBe('systemd');
  });

  it('a second daemon refuses to start while one serves, and the first keeps serving', () => {
    const run = runOnPrivateHost(`${startDaemon}
      set +e; "$BINARY" agent --config /etc/daemon-config.json 2>/tmp/second.err; code=$?; set -e
      echo "second=$code"; cat /tmp/second.err
      "$BINARY" status --json`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('second=4');
    expect(run.stdout).toMatch(
      /error: another aks-flex-node daemon already serves \/run\/aks-flex-node\/agent.sock/,
    );
    expect(statusResponseSchema.parse(lastJsonLine(run)).daemon.socket).toBe('self-bound');
  });

  it('refuses unknown fields and a huge body with 4xx problem+json, changing nothing', () => {
    const run = runOnPrivateHost(String.raw`
      legacy_install
      stand_in_last_good
      mkdir -p /opt/unbounded
      ${startDaemon}
      wait_for_gate
      before=$(find /opt /usr/local -printf '%p %y %m %l\n' | sort | sha256sum)
      sock=/run/aks-flex-node/agent.sock
      curl -s -o /tmp/unknown.json -w 'unknown=%{http_code} %{content_type}\n' --unix-socket "$sock" \
        -H 'content-type: application/json' -d '{"force":true}' http://agent/v1/host-root/migrate
      head -c 200000 /dev/zero | tr '\0' 'x' | sed 's/^/{"pad":"/; s/$/"}/' > /tmp/huge.json
      curl -s -o /tmp/huge.out -w 'huge=%{http_code} %{content_type}\n' --unix-socket "$sock" \
        -H 'content-type: application/json' --data-binary @/tmp/huge.json http://agent/v1/host-root/migrate \
        || echo "huge curl exit $?" # 55: the daemon answered 413 and closed before curl sent it all; the status is still checked
      after=$(find /opt /usr/local -printf '%p %y %m %l\n' | sort | sha256sum)
      [ "$before" = "$after" ] && echo unchanged=yes || echo unchanged=no
      jq -c . /tmp/unknown.json`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('unknown=400 application/problem+json');
    expect(run.stdout).toContain('huge=413 application/problem+json');
    expect(run.stdout).toContain('unchanged=yes');
    expect(lastJsonLine(run)).toMatchObject({ code: 'INVALID_ARGUMENT', status: 400 });
  });

  it('while the startup gate is shut a change is refused at once with 503 DAEMON_NOT_READY; reads are served', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      sock=/run/aks-flex-node/agent.sock
      curl -s -o /tmp/early.json -w 'early=%{http_code} seconds=%{time_total}
' --unix-socket "$sock"         -H 'content-type: application/json' -d '{}' http://agent/v1/host-root/migrate
      curl -s -o /dev/null -w 'read=%{http_code}
' --unix-socket "$sock" http://agent/v1/host-root
      wait_for_gate
      curl -s -o /dev/null -w 'later=%{http_code}
' --unix-socket "$sock"         -H 'content-type: application/json' -d '{}' http://agent/v1/host-root/migrate
      jq -c . /tmp/early.json`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^early=503 seconds=0\.\d+$/m);
    expect(run.stdout).toContain('read=200');
    expect(run.stdout).toContain('later=200');
    expect(lastJsonLine(run)).toMatchObject({
      code: 'DAEMON_NOT_READY',
      status: 503,
      hint: expect.stringContaining('aks-flex-node status') as unknown,
    });
  });

  it('legacy host: the daemon migrates at start, and status shows the root linked', () => {
    const run = runOnPrivateHost(`
      legacy_install
      stand_in_last_good
      ${startDaemon}
      wait_for_gate
      "$BINARY" status --json`);
    expect(run.status, run.stderr).toBe(0);
    const status = statusResponseSchema.parse(lastJsonLine(run));
    expect(status.hostRoot).toMatchObject({ state: 'linked', resolved: '/usr/local' });
    // Last-good predates the host root: the move waits, and status says why.
    expect(status.startup).toMatchObject({ gate: 'open', move: 'not-ready' });
    expect(status.startup.reason).toMatch(/last-good/);
  });

  it('status without a daemon fails with exit 5 and says how to check it', () => {
    const run = runOnPrivateHost('"$BINARY" status');
    expect(run.status).toBe(5);
    expect(run.stderr).toMatch(
      /^error: the daemon did not answer on \/run\/aks-flex-node\/agent.sock/m,
    );
    expect(run.stderr).toMatch(/^hint: .*systemctl status aks-flex-node-agent/m);
  });

  it('stops cleanly on SIGTERM with exit 0', () => {
    const run = runOnPrivateHost(String.raw`
      echo '{}' > /etc/daemon-config.json
      "$BINARY" agent --config /etc/daemon-config.json > /tmp/daemon.log 2>&1 &
      daemon=$!
      wait_for_socket
      kill -TERM "$daemon"
      set +e; wait "$daemon"; code=$?; set -e
      echo "exit=$code"
      grep -c 'daemon shutting down' /tmp/daemon.log`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('exit=0');
    expect(run.stdout.trim().split('\n').at(-1)).toBe('1');
  });

  it('version --json runs with no node on PATH', () => {
    const run = runOnPrivateHost(`
      mkdir -p /tmp/empty
      if PATH=/tmp/empty command -v node; then echo "node is reachable" >&2; exit 9; fi
      PATH=/tmp/empty "$BINARY" version --json`);
    expect(run.status, run.stderr).toBe(0);
    expect(lastJsonLine(run)).toMatchObject({
      capabilities: expect.arrayContaining(['host-root']) as unknown,
    });
  });
});
