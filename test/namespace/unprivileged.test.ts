import { describe, expect, it } from 'vitest';
import { namespaceUnavailable, runOnPrivateHost, unmanagedDaemon } from './private-host.js';

// Issue 24 item 6: a real unprivileged user (nobody, through setpriv) runs
// the built binary beside a serving daemon. Commands that need root say so
// with the not-root exit code (8); the ones documented as unprivileged work.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) {
  console.warn(`SKIPPED test/namespace/unprivileged: ${unavailable}`);
}

describe.skipIf(unavailable !== undefined)('an unprivileged user beside a serving daemon', () => {
  it('issue24#6 status: not-root (8) naming the socket, not EACCES; --preflight and preflight work', () => {
    const result = runOnPrivateHost(
      String.raw`${unmanagedDaemon}
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
install_agent
start_daemon
cp "$BINARY" /tmp/aks-flex-node && chmod 0755 /tmp/aks-flex-node
code=0; as_nobody /tmp/aks-flex-node status >/tmp/status.out 2>&1 || code=$?; echo "status=$code"
code=0; as_nobody /tmp/aks-flex-node agent-upgrade --preflight >/tmp/plan.out 2>&1 || code=$?; echo "plan=$code"
code=0; as_nobody /tmp/aks-flex-node preflight >/tmp/preflight.out 2>&1 || code=$?; echo "preflight=$code"
echo ---; cat /tmp/status.out; echo ---; cat /tmp/plan.out; echo ---; cat /tmp/preflight.out`,
      120_000,
    );
    const context = `status ${result.status}\n${result.stdout}\n${result.stderr}`;
    expect(result.status, context).toBe(0);
    const [facts = '', status = '', plan = '', preflight = ''] = result.stdout.split('---\n');
    expect(facts, context).toContain('status=8\n');
    expect(status).toContain(
      "error: the daemon's socket /run/aks-flex-node/agent.sock is root's alone, and this command does not run as root",
    );
    expect(status).not.toContain('EACCES');
    expect(facts, context).toContain('plan=0\n');
    expect(plan).toContain('Preflight: no changes applied');
    expect(facts, context).toContain('preflight=0\n');
    expect(preflight).toContain('OK install-dir');
    expect(preflight).toContain('Preflight: ok');
  }, 180_000);
});
