import { describe, expect, it } from 'vitest';
import { hostRootResponseSchema } from '@aks-flex-node/api';
import { lastJsonLine, namespaceUnavailable, runOnPrivateHost } from './private-host.js';

// The built executable against the real paths /opt/unbounded/agent and
// /usr/local, each scenario on its own throwaway host in a private mount namespace.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/host-root: ${unavailable}`);

/** Runs `host-root --migrate --json` twice (it must be idempotent) and reports the second answer. */
const migrateTwice =
  '"$BINARY" host-root --migrate --json >/dev/null\n"$BINARY" host-root --migrate --json';

describe.skipIf(unavailable !== undefined)('host-root on a private host', () => {
  it('fresh host: nothing to migrate, and /opt/unbounded is not created', () => {
    const run = runOnPrivateHost(`
      "$BINARY" host-root --json
      ${migrateTwice}
      [ ! -e /opt/unbounded ] || { echo "/opt/unbounded was created" >&2; exit 9; }`);
    expect(run.status, run.stderr).toBe(0);
    const after = hostRootResponseSchema.parse(lastJsonLine(run));
    expect(after).toMatchObject({
      state: 'absent',
      resolved: '/opt/unbounded/agent',
      planned: '/opt/unbounded/agent',
    });
  });

  it('legacy host: planned is /usr/local, migrate links the root, the parent is created 0755', () => {
    const run = runOnPrivateHost(`
      legacy_install
      "$BINARY" host-root --planned
      # docs/cli.md: not yet linked, --resolved names the empty host root, plain the files' root.
      echo "resolved=$("$BINARY" host-root --resolved) plain=$("$BINARY" host-root)"
      [ ! -e /opt/unbounded ] || { echo "planned changed the host" >&2; exit 9; }
      ${migrateTwice} > /tmp/after.json
      echo "link=$(readlink /opt/unbounded/agent) parent=$(stat -c %a /opt/unbounded)"
      cat /tmp/after.json`);
    expect(run.status, run.stderr).toBe(0);
    const [planned, unlinked, facts] = run.stdout.trim().split('\n');
    expect(planned).toBe('/usr/local');
    expect(unlinked).toBe('resolved=/opt/unbounded/agent plain=/usr/local');
    expect(facts).toBe('link=/usr/local parent=755');
    expect(hostRootResponseSchema.parse(lastJsonLine(run))).toMatchObject({
      state: 'linked',
      resolved: '/usr/local',
    });
  });

  it('linked host without an installation: the dead link is removed', () => {
    const run = runOnPrivateHost(`
      mkdir -p /opt/unbounded && ln -s /usr/local /opt/unbounded/agent
      "$BINARY" host-root --planned
      ${migrateTwice}
      [ ! -L /opt/unbounded/agent ] || { echo "the link survived" >&2; exit 9; }
      [ -d /opt/unbounded ] || { echo "the parent was removed" >&2; exit 9; }`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe('/opt/unbounded/agent');
    expect(hostRootResponseSchema.parse(lastJsonLine(run)).state).toBe('absent');
  });

  it("an operator's link elsewhere is kept and counts as released", () => {
    const run = runOnPrivateHost(`
      mkdir -p /srv/agent /opt/unbounded && ln -s /srv/agent /opt/unbounded/agent
      ${migrateTwice}
      echo "link=$(readlink /opt/unbounded/agent)" >&2`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain('link=/srv/agent');
    expect(hostRootResponseSchema.parse(lastJsonLine(run))).toMatchObject({
      state: 'other',
      resolved: '/srv/agent',
      legacyReleased: true,
    });
  });

  it('installed under both roots: refused with exit 3, naming both roots, nothing changed', () => {
    const run = runOnPrivateHost(`
      legacy_install
      mkdir -p /opt/unbounded/agent/lib/aks-flex-node
      cp "$BINARY" /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-blue
      before=$(find /opt /usr/local -printf '%p %y %m\\n' | sort | sha256sum)
      set +e; "$BINARY" host-root --migrate; code=$?; set -e
      after=$(find /opt /usr/local -printf '%p %y %m\\n' | sort | sha256sum)
      [ "$before" = "$after" ] || { echo "the refusal changed the host" >&2; exit 9; }
      exit "$code"`);
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(
      /^error: .*installed under both \/usr\/local and \/opt\/unbounded\/agent/m,
    );
    expect(run.stderr).toMatch(/^hint: /m);
  });

  it('/usr/local read-only: a legacy host is still linked, writing only /opt', () => {
    const run = runOnPrivateHost(`
      legacy_install
      mount -o remount,ro /usr/local
      if touch /usr/local/probe 2>/dev/null; then echo "/usr/local is writable" >&2; exit 9; fi
      ${migrateTwice}`);
    expect(run.status, run.stderr).toBe(0);
    expect(hostRootResponseSchema.parse(lastJsonLine(run))).toMatchObject({
      state: 'linked',
      resolved: '/usr/local',
    });
  });

  it('an existing /opt/unbounded with mode 0700 and files is left exactly as it was', () => {
    const run = runOnPrivateHost(`
      mkdir -m 0700 -p /opt/unbounded/artifacts/v1
      echo manifest > /opt/unbounded/artifacts/v1/manifest.json
      chmod 0700 /opt/unbounded
      legacy_install
      ${migrateTwice} >/dev/null
      echo "mode=$(stat -c %a /opt/unbounded) manifest=$(cat /opt/unbounded/artifacts/v1/manifest.json) link=$(readlink /opt/unbounded/agent)"`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('mode=700 manifest=manifest link=/usr/local');
  });
});
