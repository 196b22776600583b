import { describe, expect, it } from 'vitest';
import { namespaceUnavailable, runOnPrivateHost } from './private-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/nspawn-lifecycle: ${unavailable}`);

// The daemon runs by hand (no systemd): it writes the hooks but does not
// reload systemd, which the private host does not run.
const startDaemon = String.raw`
echo '{}' > /etc/daemon-config.json
start_daemon() {
  "$BINARY" agent --config /etc/daemon-config.json >> /tmp/daemon.log 2>&1 &
  daemon=$!
  wait_for_socket
  wait_for_gate
}
stop_daemon() { kill -TERM "$daemon"; wait "$daemon" || true; rm -f /run/aks-flex-node/agent.sock; }
trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true' EXIT
units=/etc/systemd/system
helper_of() { sed -n 's/^ExecStart=\(.*\) nspawn-lifecycle pre-start .*/\1/p' "$units/unbounded-agent-regenerate-config@$1.service"; }
post_of() { sed -n 's/^ExecStartPost=\(.*\) nspawn-lifecycle post-start .*/\1/p' "$units/systemd-nspawn@$1.service.d/override.conf"; }`;

describe.skipIf(unavailable !== undefined)('the nspawn lifecycle helper on a private host', () => {
  it('pre-start with no daemon exits 0, logs why, and writes nothing', () => {
    const run = runOnPrivateHost(String.raw`
      before=$(find /opt /usr/local /etc/systemd -printf '%p %y %m %l\n' | sort | sha256sum)
      "$BINARY" nspawn-lifecycle pre-start kube1 2>/tmp/hook.err; echo "exit=$?"
      after=$(find /opt /usr/local /etc/systemd -printf '%p %y %m %l\n' | sort | sha256sum)
      [ "$before" = "$after" ] && echo unchanged=yes || echo unchanged=no
      cat /tmp/hook.err`);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('exit=0');
    expect(run.stdout).toContain('unchanged=yes');
    const line = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, phase: 'pre-start', machine: 'kube1' });
    expect(line.msg).toBe(
      'not running the nspawn lifecycle phase: no daemon answered on /run/aks-flex-node/agent.sock (the socket does not exist); the machine keeps its config',
    );
  });

  it('an unknown machine is refused (exit 2) before the daemon is asked, for every phase', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      start_daemon
      for phase in pre-start post-start reconcile; do
        set +e; "$BINARY" nspawn-lifecycle "$phase" not-a-machine 2>/tmp/err; code=$?; set -e
        echo "$phase=$code $(head -1 /tmp/err)"
      done
      ls "$units" | grep -c nspawn || true
      "$BINARY" help | grep -c nspawn-lifecycle || true`);
    expect(run.status, run.stderr).toBe(0);
    for (const phase of ['pre-start', 'post-start', 'reconcile']) {
      expect(run.stdout).toContain(`${phase}=2 error: unknown nspawn machine "not-a-machine"`);
    }
    // No hook was written, and the command is hidden from help (spec/daemon.md 9.7, 93).
    expect(run.stdout.trim().split('\n').slice(-2)).toEqual(['0', '0']);
  });

  it('with a daemon, pre-start regenerates the hooks naming the helper under the resolved root; after the root changes they name the new one', () => {
    const run = runOnPrivateHost(
      String.raw`
      ${startDaemon}
      legacy_install
      # Linked it stays: a last-good that predates the host root keeps the
      # daemon from moving the files (the move's own suites cover that).
      stand_in_last_good
      # The helper an earlier release left: not this build.
      printf '#!/bin/sh\necho earlier-helper\n' > /usr/local/bin/unbounded-agent-nspawn-lifecycle
      chmod 0755 /usr/local/bin/unbounded-agent-nspawn-lifecycle
      start_daemon
      echo "root=$(readlink /opt/unbounded/agent)"
      # upstream #378: the daemon's start replaced it with the running binary.
      cmp -s "$BINARY" /usr/local/bin/unbounded-agent-nspawn-lifecycle && echo "start-installed=yes"
      "$BINARY" nspawn-lifecycle pre-start kube2 2>/tmp/hook.err; echo "exit=$?"
      cat /tmp/hook.err
      echo "linked: pre=$(helper_of kube2) post=$(post_of kube2)"
      [ -e "$units/unbounded-agent-regenerate-config@kube1.service" ] && echo kube1=written || echo kube1=absent
      stop_daemon

      # The host root changes: the files move into a real /opt/unbounded/agent
      # (as the move leaves them, links rebased) and the legacy ones go.
      rm /opt/unbounded/agent
      mkdir -p /opt/unbounded/agent/bin /opt/unbounded/agent/lib/aks-flex-node /opt/unbounded/agent/libexec
      cp "$BINARY" /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-blue
      ln -s /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-blue /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current
      ln -s /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-blue /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-last-good
      ln -s /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current /opt/unbounded/agent/bin/aks-flex-node
      rm -rf /usr/local/lib/aks-flex-node /usr/local/bin/aks-flex-node /usr/local/bin/unbounded-agent-nspawn-lifecycle
      start_daemon
      "$BINARY" nspawn-lifecycle pre-start kube2 2>/tmp/hook2.err; echo "exit=$?"
      cat /tmp/hook2.err
      echo "moved: pre=$(helper_of kube2) post=$(post_of kube2)"
      cmp -s "$BINARY" /opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle && echo "moved-helper=this-build"
      grep -rl /usr/local "$units"/unbounded-agent-regenerate-config@kube2.service "$units"/systemd-nspawn@kube2.service.d || echo "no-hook-names-usr-local"`,
      120_000,
    );
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('root=/usr/local');
    expect(run.stdout).toContain('start-installed=yes');
    expect(run.stdout).toContain(
      'linked: pre=/usr/local/bin/unbounded-agent-nspawn-lifecycle post=/usr/local/bin/unbounded-agent-nspawn-lifecycle',
    );
    expect(run.stdout).toContain('kube1=absent');
    expect(run.stdout).toMatch(
      /"msg":"the daemon regenerated the hooks of kube2: they run \/usr\/local\/bin\/unbounded-agent-nspawn-lifecycle"/,
    );
    expect(run.stdout).toContain(
      'moved: pre=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle post=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
    );
    expect(run.stdout).toContain('moved-helper=this-build');
    expect(run.stdout).toContain('no-hook-names-usr-local');
    expect(run.stdout.match(/exit=0/g)).toHaveLength(2);
  });

  it('a daemon that refuses (an activation holds the lock) leaves the hooks as they were, exit 0', () => {
    const run = runOnPrivateHost(String.raw`
      ${startDaemon}
      start_daemon
      "$BINARY" nspawn-lifecycle pre-start kube1 2>/dev/null
      before=$(sha256sum "$units"/unbounded-agent-regenerate-config@kube1.service "$units"/systemd-nspawn@kube1.service.d/override.conf)
      # Hold the activation lock as another activation would (proper-lockfile's directory).
      mkdir /run/aks-flex-node/activation.lock
      "$BINARY" nspawn-lifecycle pre-start kube1 2>/tmp/hook.err; echo "exit=$?"
      after=$(sha256sum "$units"/unbounded-agent-regenerate-config@kube1.service "$units"/systemd-nspawn@kube1.service.d/override.conf)
      [ "$before" = "$after" ] && echo unchanged=yes
      cat /tmp/hook.err`);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('exit=0');
    expect(run.stdout).toContain('unchanged=yes');
    expect(run.stdout).toMatch(
      /"level":40.*"code":"ACTIVATION_IN_PROGRESS".*the machine keeps its config/,
    );
  });
});
