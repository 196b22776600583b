import { describe, expect, it } from 'vitest';
import { operationSchema } from '@aks-flex-node/api';
import {
  facts,
  lastJsonLine,
  namespaceUnavailable,
  runOnPrivateHost,
  unmanagedDaemon,
} from './private-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/reset: ${unavailable}`);

// A host the agent was installed on (by its own daemon, from the built
// binary), then given everything reset removes: every unit including the
// first-boot one, helpers and recovery scripts under both roots, the upgrade
// signal, the digest record and an unfinished move's staging copy. systemd
// is a fake systemctl on PATH that logs its calls, with /run/systemd/system
// present so the product takes the host for a systemd one.
const installedHost = String.raw`
${unmanagedDaemon}
install -d -m 0750 /opt/unbounded
install -d -m 0700 /opt/unbounded/artifacts
echo '{"images":["pause:3.10"]}' > /opt/unbounded/artifacts/manifest.json
mkdir -p /run/fakebin /run/systemd/system
cat > /run/fakebin/systemctl <<'FAKE'
#!/bin/bash
echo "$*" >> /run/systemctl.log
exit 0
FAKE
chmod 0755 /run/fakebin/systemctl
export PATH=/run/fakebin:$PATH
install_agent
# Everything a node has besides the agent: reset removes it too.
real_node
mkdir -p /etc/aks-flex-node
echo '{"agent":{"logLevel":"info"}}' > /etc/aks-flex-node/config.json
chmod 0600 /etc/aks-flex-node/config.json
for unit in aks-flex-node-agent.service aks-flex-node-agent.socket aks-flex-node-agent-recovery.service \
    aks-flex-node-upgrade-guard.service aks-flex-node-bootstrap.service unbounded-localdns-network.service; do
  printf '[Unit]\nDescription=%s\n' "$unit" > "/etc/systemd/system/$unit"
done
for root in /opt/unbounded/agent /usr/local; do
  install -D -m 0755 /dev/null "$root/bin/unbounded-agent-nspawn-lifecycle"
  install -D -m 0700 /dev/null "$root/libexec/unbounded-localdns-network"
  install -D -m 0755 /dev/null "$root/lib/aks-flex-node/aks-flex-node-recovery.sh"
done
echo 'sha256:0000' > /etc/aks-flex-node/host-root-agents
install -D -m 0755 "$BINARY" /opt/unbounded/agent.staging/bin/aks-flex-node
`;

// Adds the signal only once a started daemon has judged (3 s), so it reads as an upgrade left behind.
const pendingSignal = String.raw`
echo '{"operationName":"upgrade-left-behind"}' > /etc/aks-flex-node/agent-upgrade-signal.json
`;

// What reset leaves, as one comparable text: every path under the roots,
// units and config, with type and mode; the config's digest; the kept
// binary's answer; and how /opt/unbounded looks.
const endState = String.raw`
state() {
  find /opt /usr/local /etc/systemd/system /etc/aks-flex-node -printf '%p %y %m %l\n' | sort
  sha256sum /etc/aks-flex-node/config.json /opt/unbounded/artifacts/manifest.json
  stat -c 'parent %a' /opt/unbounded
  /opt/unbounded/agent/bin/aks-flex-node version --json | jq -c '{version}'
}
state > /tmp/end-state
echo "end_state=$(sha256sum < /tmp/end-state | cut -c1-16)"
echo "machines_left=$(find /var/lib/machines /etc/systemd/nspawn /etc/wireguard -mindepth 1 2>/dev/null | wc -l)"
# Reset's calls only: start_daemon polls status, and a status that finds no
# daemon asks systemd about the agent unit (diagnose-unreachable.ts, through
# the wrapper's show); reset itself never runs \`systemctl show\`.
echo "systemctl=$(grep -v -E -- '^show |--property=LoadState --value' /run/systemctl.log | paste -sd'|')"
`;

interface Scenario {
  name: string;
  script: string;
}

const scenarios: Scenario[] = [
  {
    name: 'daemon#8.3 with the daemon dead: the CLI resets offline under the lock',
    script: `${installedHost}${pendingSignal}
      "$BINARY" reset --json > /tmp/reset.json
      ${endState}
      cat /tmp/reset.json`,
  },
  {
    name: 'with the config unreadable: the daemon cannot start, and reset never reads it',
    script: `${installedHost}${pendingSignal}
      printf '\\x00{not json' > /etc/aks-flex-node/config.json
      set +e; "$BINARY" agent --config /etc/aks-flex-node/config.json >/tmp/daemon-broken.log 2>&1; echo "daemon_exit=$?"; set -e
      "$BINARY" reset --json > /tmp/reset.json
      echo '{"agent":{"logLevel":"info"}}' > /etc/aks-flex-node/config.json
      ${endState}
      cat /tmp/reset.json`,
  },
  {
    name: 'twice in a row: the second reset succeeds and changes nothing',
    script: `${installedHost}${pendingSignal}
      "$BINARY" reset --json > /dev/null
      : > /run/systemctl.log
      "$BINARY" reset --json > /tmp/reset.json
      ${endState}
      cat /tmp/reset.json`,
  },
  {
    name: 'daemon#8.3 with the daemon running: it resets, records the outcome, and stops itself',
    script: `${installedHost}
      start_daemon "$CUR"
      sleep 4
      ${pendingSignal}
      "$BINARY" reset --json > /tmp/reset.json
      # Looked at the moment reset returns: running, or gone (a zombie bash
      # has not reaped yet runs no more code).
      state=$(sed 's/.*) //' "/proc/$daemon_pid/stat" 2>/dev/null | cut -c1 || true)
      echo "daemon_at_return=\${state:-gone}"
      wait_daemon_exit
      echo "daemon_gone=yes"
      ${endState}
      cat /tmp/reset.json`,
  },
];

describe.skipIf(unavailable !== undefined)('reset on a private host', () => {
  const endStates = new Map<string, string>();

  it.each(scenarios)('$name', ({ name, script }) => {
    const run = runOnPrivateHost(script, 120_000);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const found = facts(run.stdout);
    const operation = operationSchema.parse(lastJsonLine(run));
    expect(operation).toMatchObject({ kind: 'reset', state: 'succeeded' });
    expect(operation.keptBinary).toBe('/opt/unbounded/agent/bin/aks-flex-node');
    const calls = (found.systemctl ?? '').split('|');
    if (name.startsWith('twice')) {
      // Nothing left to disable; only the harmless cancel, stops and reload.
      expect(operation.removed).toEqual([]);
      expect(calls.filter((call) => call.startsWith('disable'))).toEqual([]);
    } else {
      // The queued restart is cancelled first, the first-boot unit goes before the agent stops.
      expect(calls[0]).toMatch(/^stop aks-flex-node-agent-upgrade-restart-\*\.timer/);
      const firstBoot = calls.indexOf('disable --now aks-flex-node-bootstrap.service');
      const agentStop = calls.indexOf('stop aks-flex-node-agent.service');
      expect(firstBoot).toBeGreaterThan(0);
      // A daemon started by hand is not the agent unit, so the unit is stopped
      // like any other; under systemd (test/e2e) the daemon stops itself last.
      expect(agentStop).toBeGreaterThan(firstBoot);
      if (name.includes('daemon running')) {
        expect(found.daemon_gone).toBe('yes');
        // As the Go releases' reset did, it returns with the agent stopped.
        expect(['gone', 'Z']).toContain(found.daemon_at_return);
      }
      expect(operation.removed).toEqual(
        expect.arrayContaining([
          '/etc/systemd/system/aks-flex-node-agent.service',
          '/etc/systemd/system/aks-flex-node-bootstrap.service',
          '/usr/local/bin/unbounded-agent-nspawn-lifecycle',
          '/opt/unbounded/agent/libexec/unbounded-localdns-network',
          '/etc/aks-flex-node/agent-upgrade-signal.json',
          '/etc/aks-flex-node/host-root-agents',
        ]),
      );
    }
    // The real-shaped node's machines, settings, hooks and keys are gone too.
    expect(found.machines_left, run.stdout).toBe('0');
    if (!name.startsWith('twice')) {
      expect(operation.removed).toEqual(
        expect.arrayContaining([
          '/var/lib/machines/kube1',
          '/var/lib/machines/kube2',
          '/etc/systemd/nspawn/kube1.nspawn',
          '/etc/systemd/system/systemd-nspawn@kube2.service.d',
          '/etc/systemd/system/unbounded-agent-regenerate-config@kube1.service',
        ]),
      );
    }
    if (name.includes('unreadable')) expect(found.daemon_exit).not.toBe('0');
    expect(calls.at(-1)).toBe('daemon-reload');
    endStates.set(name, found.end_state ?? '');
  });

  it('every scenario leaves the same end state', () => {
    expect(endStates.size).toBe(scenarios.length);
    expect(new Set(endStates.values()).size, JSON.stringify([...endStates])).toBe(1);
  });

  it('daemon#8.1 linked host (an earlier release under /usr/local): the link and the legacy binaries stay, the helpers go', () => {
    const run = runOnPrivateHost(String.raw`
      legacy_install
      # Keeps the host linked: with a last-good that predates the host root
      # the move is not ready, whereas the daemon that installs the agent would
      # otherwise move it into /opt (the move's own suites cover that).
      stand_in_last_good
      ${installedHost}
      "$BINARY" reset --json > /tmp/reset.json
      echo "root_link=$(readlink /opt/unbounded/agent)"
      echo "legacy_runs=$(/usr/local/bin/aks-flex-node version --json | jq -r .version)"
      for p in /usr/local/bin/unbounded-agent-nspawn-lifecycle /usr/local/libexec/unbounded-localdns-network           /usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh /etc/systemd/system/aks-flex-node-agent.service           /opt/unbounded/agent.staging; do
        if [ -e "$p" ] || [ -L "$p" ]; then echo "left=$p"; fi
      done
      echo "parent=$(stat -c %a /opt/unbounded) artifacts=$(ls /opt/unbounded/artifacts)"
      cat /tmp/reset.json`);
    expect(
      run.status,
      `${run.stdout}
${run.stderr}`,
    ).toBe(0);
    const found = facts(run.stdout);
    expect(found.root_link).toBe('/usr/local');
    expect(found.legacy_runs).toMatch(/\S/);
    expect(found.left).toBeUndefined();
    expect(found.parent).toBe('750 artifacts=manifest.json');
    const operation = operationSchema.parse(lastJsonLine(run));
    expect(operation).toMatchObject({
      state: 'succeeded',
      keptBinary: '/opt/unbounded/agent/bin/aks-flex-node',
    });
  });

  it('daemon#8.4 a reset while another holder has the activation lock is refused at once and changes nothing', () => {
    const run = runOnPrivateHost(String.raw`${installedHost}
      snapshot() { find /opt /usr/local /etc/systemd/system /etc/aks-flex-node -printf '%p %y %m %l\n' | sort | sha256sum; }
      before=$(snapshot)
      : > /run/systemctl.log
      # Another holder's lock, as proper-lockfile leaves it while its holder
      # refreshes it: the lock directory with a fresh mtime.
      mkdir -p -m 0750 /run/aks-flex-node
      mkdir /run/aks-flex-node/activation.lock
      start=$(date +%s%N)
      set +e; "$BINARY" reset --json >/tmp/out 2>/tmp/err; code=$?; set -e
      echo "exit=$code"
      echo "elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))"
      [ "$before" = "$(snapshot)" ] && echo unchanged=yes || echo unchanged=no
      echo "systemctl_calls=$(wc -l < /run/systemctl.log)"
      cat /tmp/err`);
    expect(run.status, run.stderr).toBe(0);
    const found = facts(run.stdout);
    expect(found.exit).toBe('4');
    expect(found.unchanged).toBe('yes');
    expect(found.systemctl_calls).toBe('0');
    expect(Number(found.elapsed_ms)).toBeLessThan(5_000);
    expect(run.stdout).toMatch(
      /^error: a reset cannot start now: another process holds the activation lock .*activation\.lock/m,
    );
  });
});
