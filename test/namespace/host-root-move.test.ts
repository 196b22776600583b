import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleMoveDriver, moveHost } from './move-driver.js';
import { facts, runOnPrivateHost } from './private-host.js';
import { moveSuiteUnavailable } from './move-suite.js';

// The move's host-facing rules on a real, private host: the noexec skip and
// a fresh host whose /usr/local is read-only.
const unavailable = moveSuiteUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/host-root-move: ${unavailable}`);

let driver: { file: string; dir: string } | undefined;
beforeAll(async () => {
  if (unavailable === undefined) driver = await bundleMoveDriver();
}, 60_000);
afterAll(() => {
  if (driver !== undefined) rmSync(driver.dir, { recursive: true, force: true });
});

function onHost(script: string): ReturnType<typeof runOnPrivateHost> {
  if (driver === undefined) throw new Error('the move driver was not bundled');
  return runOnPrivateHost(`${moveHost}\n${script}`, 60_000, {
    NODE: process.execPath,
    DRIVER: driver.file,
  });
}

describe.skipIf(unavailable !== undefined)('the host-root move on a private host', () => {
  it('hostroot#66 /opt mounted noexec leaves the host linked with nothing copied', () => {
    const run = onHost(String.raw`
      mount -o remount,noexec /opt
      legacy_host
      before=$(find /opt /usr/local /etc/systemd/system -printf '%p %y %m %l\n' | sort | sha256sum)
      daemon_start
      echo "last=$last"
      echo "state=$(root_state)"
      echo "staging=$([ -e /opt/unbounded/agent.staging ] && echo present || echo absent)"
      echo "optFiles=$(find /opt -xdev -type f | sort | tr '\n' ' ')"
      echo "unchanged=$([ "$before" = "$(find /opt /usr/local /etc/systemd/system -printf '%p %y %m %l\n' | sort | sha256sum)" ] && echo yes || echo no)"
      echo "unit=$(unit_binary)"
      echo "runs=$(unit_runs)"
      echo "records=$(wc -l </etc/aks-flex-node/host-root-agents)"
    `);
    const seen = facts(run.stdout);
    const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
    expect(run.status, context).toBe(0);
    const last = JSON.parse(seen.last ?? '') as { outcome: { kind: string; reason: string } };
    expect(last.outcome.kind, context).toBe('skipped-noexec');
    expect(last.outcome.reason, context).toContain('/opt is mounted noexec');
    expect(last.outcome.reason, context).toContain('stays linked to /usr/local');
    expect(seen.state, context).toBe('linked');
    expect(seen.staging, context).toBe('absent');
    expect(seen.optFiles?.trim(), context).toBe('/opt/unbounded/artifacts/manifest.json');
    expect(seen.unchanged, context).toBe('yes');
    expect(seen.unit, context).toBe('/usr/local/lib/aks-flex-node/aks-flex-node-current');
    expect(seen.runs, context).toBe('yes');
    // The running daemon still recorded itself: the next start may move once /opt allows it.
    expect(seen.records, context).toBe('2');
  });

  it('hostroot#66 with /opt allowing programs the legacy host moves in two starts', () => {
    const run = onHost(String.raw`
      legacy_host
      for _ in 1 2 3; do daemon_start; case "$last" in *moved*) break ;; esac; done
      echo "last=$last"
      echo "state=$(root_state)"
      echo "unit=$(unit_binary)"
      echo "runs=$(unit_runs)"
      echo "legacyLeft=$(legacy_left)"
      echo "libDir=$([ -e /usr/local/lib/aks-flex-node ] && echo present || echo absent)"
      echo "otherTool=$(cat /usr/local/bin/other-tool)"
      echo "parentMode=$(stat -c %a /opt/unbounded)"
      echo "record=$([ -e /etc/aks-flex-node/host-root-agents ] && echo present || echo absent)"
      echo "restarts=$(wc -l </run/aks-flex-node/move-driver/restarts)"
    `);
    const seen = facts(run.stdout);
    const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
    expect(run.status, context).toBe(0);
    expect(seen.last, context).toBe('{"outcome":{"kind":"moved"}}');
    expect(seen.state, context).toBe('installed');
    expect(seen.unit, context).toBe('/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current');
    expect(seen.runs, context).toBe('yes');
    expect(seen.legacyLeft, context).toBe('0');
    expect(seen.libDir, context).toBe('absent');
    expect(seen.otherTool, context).toBe('other');
    expect(seen.parentMode, context).toBe('750');
    expect(seen.record, context).toBe('absent');
    expect(seen.restarts, context).toBe('1');
  });

  it('a fresh host with a read-only /usr/local prepares and installs under /opt/unbounded/agent', () => {
    const run = onHost(String.raw`
      stand_in fresh /var/tmp/aks-flex-node-fresh.$$
      mount -o remount,ro /usr/local
      out=$("$NODE" "$DRIVER" fresh --exe /var/tmp/aks-flex-node-fresh.$$ | tail -1)
      rm -f /var/tmp/aks-flex-node-fresh.$$
      echo "out=$out"
      echo "modes=$(stat -c '%n %a' /opt/unbounded /opt/unbounded/agent /opt/unbounded/agent/bin /opt/unbounded/agent/lib/aks-flex-node /opt/unbounded/agent/libexec | tr '\n' ',')"
      echo "runs=$(/opt/unbounded/agent/bin/aks-flex-node version)"
      echo "usrLocal=$(find /usr/local -mindepth 1 | sort | tr '\n' ' ')"
      daemon_start_fresh() { "$NODE" "$DRIVER" run --exe /opt/unbounded/agent/bin/aks-flex-node | tail -1; }
      echo "move=$(daemon_start_fresh)"
    `);
    const seen = facts(run.stdout);
    const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
    expect(run.status, context).toBe(0);
    expect(JSON.parse(seen.out ?? ''), context).toEqual({
      outcome: {
        state: 'installed',
        resolved: '/opt/unbounded/agent',
        binary: '/opt/unbounded/agent/bin/aks-flex-node',
      },
    });
    expect(seen.modes, context).toBe(
      '/opt/unbounded 755,/opt/unbounded/agent 755,/opt/unbounded/agent/bin 755,/opt/unbounded/agent/lib/aks-flex-node 755,/opt/unbounded/agent/libexec 755,',
    );
    expect(seen.runs, context).toBe('fresh');
    expect(seen.usrLocal?.trim(), context).toBe('/usr/local/bin /usr/local/lib');
    // Nothing to move on an installed host, and nothing recorded.
    expect(seen.move, context).toBe('{"outcome":{"kind":"left-alone","state":"installed"}}');
  });
});
