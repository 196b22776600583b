import { describe, expect, it } from 'vitest';
import { convergeFailpoints, failpoints, type FailpointName } from '@aks-flex-node/failpoints';
import {
  facts,
  namespaceUnavailable,
  runOnPrivateHostAsync,
  unmanagedDaemon,
} from './private-host.js';

// Issue 22 items 2 and 3, crash safety of the new convergence steps: each
// writer that sets a corrupt signal aside or repoints `current` is killed
// (SIGKILL) at every `converge/…` failpoint, and the next run converges: no
// signal left, the damaged bytes kept under a `.corrupt-` name, current
// runnable, and a daemon started from current takes changes.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/converge-crash: ${unavailable}`);

const helpers = String.raw`${unmanagedDaemon}
SIGNAL=/etc/aks-flex-node/agent-upgrade-signal.json
mkdir -p /etc/aks-flex-node
SLOTS=/opt/unbounded/agent/lib/aks-flex-node
# current on a second slot (a copy of the product), last-good on blue: the
# state a finished upgrade leaves, where a corrupt signal is judged again.
on_green() { cp "$(readlink -f "$LG")" "$SLOTS/aks-flex-node-green"; ln -sfn "$SLOTS/aks-flex-node-green" "$CUR"; }
recover() { # [failpoint]
  AKS_FLEX_NODE_FAILPOINT="${'$'}{1:-}" "$LG" recover-agent-upgrade --message "the agent failed" >>/tmp/oneshot.log 2>&1 || true
}
report() {
  echo "hits=$(cat /tmp/daemon.log /tmp/oneshot.log 2>/dev/null | grep -c "failpoint $FP: killing" || true)"
  echo "signal=$([ -e "$SIGNAL" ] && echo present || echo absent)"
  echo "asides=$(ls /etc/aks-flex-node/ | grep -c '^agent-upgrade-signal.json.corrupt-' || true)"
  echo "asideBytes=$(cat "$(ls -d /etc/aks-flex-node/agent-upgrade-signal.json.corrupt-* | head -1)")"
  echo "current=$(readlink -f "$CUR")"
  echo "lastGood=$(readlink -f "$LG")"
  echo "gate=$("$BINARY" status --json | jq -r .startup.gate)"
  echo "exe=$("$BINARY" status --json | jq -r .daemon.executable)"
}
report_config() {
  echo "hits=$(cat /tmp/daemon.log 2>/dev/null | grep -c "failpoint $FP: killing" || true)"
  echo "config=$(cat /etc/cfg.json)"
  echo "lastGoodCopy=$(cat /etc/cfg.json.last-good)"
  echo "asides=$(ls /etc/ | grep -c '^cfg.json.corrupt-' || true)"
  echo "asideBytes=$(cat "$(ls -d /etc/cfg.json.corrupt-* | head -1)")"
  echo "gate=$("$BINARY" status --json | jq -r .startup.gate)"
  echo "problems=$("$BINARY" status --json | jq -c '.startup.problems // []')"
}
`;

/**
 * Each writer of a convergence step, killed at the failpoint, then run again
 * and the daemon started. Each failpoint is killed in at least one writer
 * (the daemon's judgement and recover-agent-upgrade share the step's code);
 * one start costs seconds here, so the table is no larger than that.
 */
const scenarios: readonly { name: string; fp: FailpointName; script: string }[] = [
  {
    name: `${failpoints.signalCorruptSetAside} in the daemon's judgement, current = last-good`,
    fp: failpoints.signalCorruptSetAside,
    script: `install_agent; printf '{garbage' > "$SIGNAL"
      ARM="$FP" start_daemon; wait_daemon_exit
      start_daemon; report; stop_daemon`,
  },
  {
    name: `${failpoints.signalCorruptReplaced} in the daemon's judgement, current on another slot (judged again and kept)`,
    fp: failpoints.signalCorruptReplaced,
    script: `install_agent; on_green; printf '{"operationName":"op-7","cand' > "$SIGNAL"
      ARM="$FP" start_daemon; wait_daemon_exit
      start_daemon; report; stop_daemon`,
  },
  ...[failpoints.signalCorruptSetAside, failpoints.signalCorruptReplaced].map((fp) => ({
    name: `${fp} in recover-agent-upgrade, current on another slot (rolled back)`,
    fp,
    script: `install_agent; on_green; : > "$SIGNAL"
      recover "$FP"; recover
      start_daemon; report; stop_daemon`,
  })),
  {
    name: `${failpoints.currentRepointed} in recover-agent-upgrade, current dangling, no signal`,
    fp: failpoints.currentRepointed,
    script: `install_agent; ln -sfn "$SLOTS/aks-flex-node-green" "$CUR"
      recover "$FP"; recover
      start_daemon; report; stop_daemon`,
  },
];

/**
 * The torn config: a daemon that served once kept the config's last-good
 * copy; the config is then torn and the next start killed at each step of
 * its restore. The start after that converges: the config is the copy again,
 * the damaged bytes are kept, and the daemon takes changes.
 */
const configScenarios: readonly { name: string; fp: FailpointName }[] = [
  failpoints.configCorruptSetAside,
  failpoints.configRestored,
].map((fp) => ({ name: `${fp} in the daemon's start, a torn config`, fp }));
const configScript = `install_agent; printf '{garbage' > /etc/cfg.json
  ARM="$FP" start_daemon; wait_daemon_exit
  start_daemon; report_config; stop_daemon`;

describe.skipIf(unavailable !== undefined)(
  'issue22 convergence killed at each step converges',
  () => {
    it('every converge/ failpoint has a scenario', () => {
      expect(new Set([...scenarios, ...configScenarios].map((s) => s.fp))).toEqual(
        new Set(convergeFailpoints),
      );
    });

    // Concurrent: each trial is its own private host, and most of its time
    // is spent waiting (see runOnPrivateHostAsync).
    it.concurrent.for(configScenarios.map((s) => [s.name, s] as const))(
      '%s',
      { timeout: 150_000 },
      async ([, scenario], { expect }) => {
        const run = await runOnPrivateHostAsync(`${helpers}\n${configScript}`, 120_000, {
          FP: scenario.fp,
        });
        const seen = facts(run.stdout);
        const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
        expect(run.status, context).toBe(0);
        expect(Number(seen.hits), context).toBeGreaterThanOrEqual(1);
        expect(seen.config, context).toBe('{}');
        expect(seen.lastGoodCopy, context).toBe('{}');
        expect(Number(seen.asides), context).toBeGreaterThanOrEqual(1);
        expect(seen.asideBytes, context).toBe('{garbage');
        expect(seen.gate, context).toBe('open');
        // Killed before the rename, the next start restores and says so;
        // killed after it, the next start finds a config that parses.
        if (scenario.fp === failpoints.configCorruptSetAside)
          expect(seen.problems, context).toMatch(
            /restored \/etc\/cfg\.json from its last-good copy/,
          );
      },
    );

    it.concurrent.for(scenarios.map((s) => [s.name, s] as const))(
      '%s',
      { timeout: 150_000 },
      async ([, scenario], { expect }) => {
        const run = await runOnPrivateHostAsync(`${helpers}\n${scenario.script}`, 120_000, {
          FP: scenario.fp,
        });
        const seen = facts(run.stdout);
        const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
        expect(run.status, context).toBe(0);
        // The failpoint really fired: a scenario that never reached it proves nothing.
        expect(Number(seen.hits), context).toBeGreaterThanOrEqual(1);
        expect(seen.signal, context).toBe('absent');
        expect(seen.gate, context).toBe('open');
        expect(seen.exe, context).toBe(seen.current);
        if (scenario.fp === failpoints.currentRepointed) {
          expect(seen.current, context).toBe(seen.lastGood);
          return;
        }
        // The damaged bytes are kept, under a name that says so.
        expect(Number(seen.asides), context).toBeGreaterThanOrEqual(1);
        expect(['{garbage', '{"operationName":"op-7","cand', ''], context).toContain(
          seen.asideBytes,
        );
        if (scenario.name.includes('judged again'))
          expect(seen.current, context).toMatch(/-green$/);
        if (scenario.name.includes('rolled back'))
          expect(seen.current, context).toBe(seen.lastGood);
      },
    );
  },
);
