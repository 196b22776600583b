import { describe, expect, it } from 'vitest';
import { exitCodes } from '@aks-flex-node/api';
import { facts, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

// `guard-agent-upgrade` as its unit runs it. The unit counts exit 1 and 2 as
// success, since a last-good without the command (a Go release, an older
// release of ours) exits with them; so a guard that fails must exit with
// something else, or its unit never fails and the recovery unit never acts.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/upgrade-guard: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('the upgrade guard command', () => {
  it('exits 0 at once with no upgrade pending, and 6 (not 1 or 2) when it cannot read the signal; the node is left as it was', () => {
    const run = runOnPrivateHost(String.raw`
      mkdir -p /etc/aks-flex-node
      # A real-shaped node, its lifecycle helper as the Go release installed it.
      real_node
      install -D -m 0755 "$BINARY" /opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle
      set +e
      "$BINARY" guard-agent-upgrade >/tmp/idle.out 2>/tmp/idle.err; echo "idle=$?"
      # A signal it cannot read: a directory where the file should be.
      mkdir /etc/aks-flex-node/agent-upgrade-signal.json
      "$BINARY" guard-agent-upgrade >/tmp/broken.out 2>/tmp/broken.err; echo "broken=$?"
      set -e
      echo "brokenError=$(grep -m1 '^error' /tmp/broken.err)"
      echo "copies=$(node_copies "$BINARY")"
      echo "hooks=$(node_hooks)"`);
    expect(run.status, run.stderr).toBe(0);
    const seen = facts(run.stdout);
    expect(seen.idle).toBe(String(exitCodes.ok.code));
    expect(seen.broken).toBe(String(exitCodes.rolledBack.code));
    expect(seen.brokenError).toMatch(/upgrade guard could not finish/);
    expect(seen.brokenError).toContain('/etc/aks-flex-node/agent-upgrade-signal.json');
    // Neither run touched the node: both machines keep their copy, the hooks stay as laid out.
    expect(seen.copies).toBe('kube1:current kube2:current ');
    expect(seen.hooks).toBe('ok');
  });
});
