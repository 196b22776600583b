import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  binary,
  facts,
  namespaceUnavailable,
  runOnPrivateHost,
  unmanagedDaemon,
} from './private-host.js';

// Round trips with a Go release (spec agentbinary 3.3-3.8, 6.2-6.3), stood in
// for by test/fixtures/go-release.sh, which judges, recovers and upgrades as
// the Go daemon does and reads and writes the same signal file. The host has
// an nspawn machine (kube1) holding its copy of the host binary, as a Go
// release leaves it. Unmanaged daemons: after a switch the scenario starts the
// next one from `current`, as systemd would.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) {
  console.warn(`SKIPPED test/namespace/go-release-round-trip: ${unavailable}`);
}

const goRelease = path.resolve(import.meta.dirname, '../fixtures/go-release.sh');
/** The release archive the build wrote beside the binary, as the Go releases name it. */
const ourArchive = path.join(
  path.dirname(binary),
  `aks-flex-node-linux-${process.arch === 'arm64' ? 'arm64' : 'amd64'}.tar.gz`,
);

const helpers = String.raw`${unmanagedDaemon}
SIGNAL=/etc/aks-flex-node/agent-upgrade-signal.json
SLOTS=/opt/unbounded/agent/lib/aks-flex-node
COPY=/var/lib/machines/kube1/usr/local/bin/aks-flex-node
member=aks-flex-node-linux-amd64
[ "$(uname -m)" = aarch64 ] && member=aks-flex-node-linux-arm64
# The Go release packed as a release archive with the one member the Go releases name.
mkdir -p /tmp/go-stage
cp "$GO_RELEASE" "/tmp/go-stage/$member"
chmod 755 "/tmp/go-stage/$member"
tar -C /tmp/go-stage --owner=0 --group=0 --numeric-owner --use-compress-program='gzip -1' -cf /tmp/go-release.tar.gz "$member"
GO_SHA=$(sha256sum /tmp/go-release.tar.gz | cut -d' ' -f1)
machine_copy() { mkdir -p "$(dirname "$COPY")"; cp "$1" "$COPY"; }
wait_signal_gone() { wait_until 60 "the signal stayed" test ! -e "$SIGNAL"; }
latest_record() { ls -t /var/lib/aks-flex-node/operations/*.json | head -1; }
report() {
  echo "current=$(readlink -f "$CUR")"
  echo "lastGood=$(readlink -f "$LG")"
  echo "currentVersion=$("$CUR" version | head -1)"
  echo "signal=$([ -e "$SIGNAL" ] && echo present || echo absent)"
  echo "copyIsCurrent=$(cmp -s "$COPY" "$(readlink -f "$CUR")" && echo yes || echo no)"
}
`;

function run(script: string) {
  const result = runOnPrivateHost(`${helpers}\n${script}`, 150_000, {
    GO_RELEASE: goRelease,
    OUR_ARCHIVE: ourArchive,
  });
  return {
    ...result,
    seen: facts(result.stdout),
    context: `status ${result.status}\n${result.stdout}\n${result.stderr}`,
  };
}

describe.skipIf(unavailable !== undefined)('round trips with a Go release', () => {
  it('this product upgrades to the Go release, whose daemon judges the upgrade complete', () => {
    const { status, seen, context } = run(String.raw`
      install_agent
      # A node as the Go releases leave it: kube1 and kube2 both hold a copy of the running binary.
      real_node
      ours=$(readlink -f "$CUR")
      start_daemon
      # The Go release answers no API, so the command cannot follow it past the restart.
      "$BINARY" agent-upgrade --url file:///tmp/go-release.tar.gz --sha256 "$GO_SHA" --json --timeout 5 >/tmp/upgrade.out 2>&1 &
      upgrade_pid=$!
      wait_daemon_exit
      echo "signalAfterSwitch=$(jq -c '{activeMachine, switchCommitted, candidate: (.candidatePath == "'"$SLOTS"'/aks-flex-node-green")}' "$SIGNAL")"
      start_daemon_go() { "$CUR" agent --config /etc/cfg.json >>/tmp/go.log 2>&1 & daemon_pid=$!; }
      start_daemon_go
      wait_signal_gone
      kill "$upgrade_pid" 2>/dev/null || true; upgrade_pid=
      echo "goResult=$(cut -d' ' -f2,3 /var/lib/go-release/results)"
      stop_daemon
      echo "previousIsLastGood=$([ "$(readlink -f "$LG")" = "$ours" ] && echo yes || echo no)"
      report`);
    expect(status, context).toBe(0);
    expect(seen, context).toMatchObject({
      signalAfterSwitch: '{"activeMachine":"kube1","switchCommitted":true,"candidate":true}',
      goResult: 'Complete Succeeded',
      previousIsLastGood: 'yes',
      current: '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green',
      currentVersion: 'aks-flex-node version v0.9.0-go',
      signal: 'absent',
      copyIsCurrent: 'yes',
    });
  });

  it('this product rolls back from a Go release that cannot start, and judges the rollback', () => {
    const { status, seen, context } = run(String.raw`
      install_agent
      # A node as the Go releases leave it: kube1 and kube2 both hold a copy of the running binary.
      real_node
      ours=$(readlink -f "$CUR")
      touch /etc/go-release-fails-to-start
      start_daemon
      "$BINARY" agent-upgrade --url file:///tmp/go-release.tar.gz --sha256 "$GO_SHA" --json --timeout 5 >/tmp/upgrade.out 2>&1 &
      upgrade_pid=$!
      wait_daemon_exit
      set +e; "$CUR" agent --config /etc/cfg.json >>/tmp/go.log 2>&1; echo "goStartExit=$?"; set -e
      # What the recovery unit does: the last-good binary's recover-agent-upgrade.
      "$LG" recover-agent-upgrade --message "the Go release did not start" >/tmp/recover.out 2>&1
      echo "recoveredSignal=$(jq -c '{failure, recoveryRequired}' "$SIGNAL" 2>/dev/null || echo none)"
      start_daemon
      wait_signal_gone
      kill "$upgrade_pid" 2>/dev/null || true; upgrade_pid=
      echo "state=$(jq -r .state "$(latest_record)")"
      echo "restored=$([ "$(readlink -f "$CUR")" = "$ours" ] && echo yes || echo no)"
      stop_daemon
      report`);
    expect(status, context).toBe(0);
    expect(seen, context).toMatchObject({
      goStartExit: '1',
      restored: 'yes',
      signal: 'absent',
      copyIsCurrent: 'yes',
    });
    expect(['rolled-back', 'failed'], context).toContain(seen.state);
    expect(seen.currentVersion, context).toMatch(/^aks-flex-node \d/);
  });

  it("the Go release upgrades to this product (the build's own archive), which judges it committed", () => {
    const { status, seen, context } = run(String.raw`
      # A host a Go release installed: blue/green under the host root, kube1's copy.
      mkdir -p "$SLOTS" /opt/unbounded/agent/bin
      cp "$GO_RELEASE" "$SLOTS/aks-flex-node-blue"; chmod 755 "$SLOTS/aks-flex-node-blue"
      ln -s "$SLOTS/aks-flex-node-blue" "$CUR"; ln -s "$SLOTS/aks-flex-node-blue" "$LG"
      ln -s "$CUR" /opt/unbounded/agent/bin/aks-flex-node
      machine_copy "$SLOTS/aks-flex-node-blue"
      "$CUR" agent --config /etc/cfg.json >>/tmp/go.log 2>&1 & daemon_pid=$!
      # A Go AgentUpgrade is a request to the running daemon, so it begins
      # after the daemon's start. A start still judging when the upgrade
      # writes its signal would take that signal for an interrupted upgrade
      # and publish it away (a CI run under load failed so).
      wait_until 60 "the Go release's daemon never started" grep -q serving /tmp/go.log
      # The Go AgentUpgrade: switch current, write its signal, restart.
      "$CUR" upgrade-to "$OUR_ARCHIVE" >/tmp/go-upgrade.out 2>&1
      echo "goSignal=$(jq -c 'del(.operationName, .initiatingDaemonInstance)' "$SIGNAL")"
      stop_daemon
      start_daemon
      wait_signal_gone
      record=$(latest_record)
      echo "state=$(jq -r .state "$record")"
      echo "operation=$(jq -r .id "$record" | cut -c1-11)"
      stop_daemon
      report`);
    expect(status, context).toBe(0);
    expect(seen, context).toMatchObject({
      goSignal: `{"activeMachine":"kube1","candidatePath":"/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green","switchCommitted":true}`,
      state: 'succeeded',
      operation: 'go-upgrade-',
      current: '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green',
      lastGood: '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-blue',
      signal: 'absent',
      copyIsCurrent: 'yes',
    });
    expect(seen.currentVersion, context).toMatch(/^aks-flex-node \d/);
  });
});
