import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  allFailpoints,
  convergeFailpoints,
  failpoints,
  helperFailpoints,
  moveFailpoints,
  type FailpointName,
} from '@aks-flex-node/failpoints';
import {
  facts,
  namespaceUnavailable,
  runOnPrivateHostAsync,
  unmanagedDaemon,
} from './private-host.js';
import { secondBuild } from './second-build.js';

// Crash safety of AgentUpgrade, tested rather than argued: for every failpoint
// the process is killed there (SIGKILL, as a power cut or OOM kill would),
// started again, and the host must converge to either the candidate
// committed or last-good restored and current, never neither, with the
// signal gone and the operation's result recorded.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/upgrade-crash: ${unavailable}`);

let build: { archive: string; sha256: string; dir: string } | undefined;
beforeAll(() => {
  if (unavailable === undefined) build = secondBuild();
}, 180_000);
afterAll(() => {
  if (build !== undefined && process.env.AKS_FLEX_NODE_SECOND_BUILD_DIR === undefined) {
    rmSync(build.dir, { recursive: true, force: true });
  }
});

/** A literal `$` for bash parameter expansions inside the template below. */
const D = '$';

const helpers = String.raw`${unmanagedDaemon}
SIGNAL=/etc/aks-flex-node/agent-upgrade-signal.json
wait_judged() { # until the signal is gone, or the daemon exited to restart
  local deadline
  for ((deadline = SECONDS + 60; SECONDS < deadline; )); do
    [ -e "$SIGNAL" ] || return 0
    kill -0 "$daemon_pid" 2>/dev/null || return 0
    nap 0.1
  done
  echo "the signal was never judged" >&2; return 1
}
begin_upgrade() {
  "$BINARY" agent-upgrade --url "file://$ARCHIVE" --sha256 "$SHA" --json --timeout 90 >/tmp/upgrade.out 2>&1 &
  upgrade_pid=$!
}
finish_upgrade() { wait "$upgrade_pid" || true; upgrade_pid=; }
# What current named before the armed step: a failed upgrade must leave exactly this.
before=
mark_before() { before=$(readlink -f "$CUR"); }
# A whole unarmed upgrade, so the next one writes the other slot.
upgrade_once() { start_daemon; begin_upgrade; wait_daemon_exit; start_daemon; finish_upgrade; wait_judged; stop_daemon; }
report() {
  stop_daemon
  if [ -n "${D}{DEBUG_CRASH:-}" ]; then cut -c1-400 /tmp/daemon.log >&2; cat /tmp/upgrade.out >&2; fi
  record=$(ls -t /var/lib/aks-flex-node/operations/*.json | head -1)
  echo "before=$before"
  echo "hits=$(grep -c "failpoint $FP: killing" /tmp/daemon.log /tmp/oneshot.log 2>/dev/null | awk -F: '{s+=$2} END {print s+0}')"
  echo "signal=$([ -e "$SIGNAL" ] && echo present || echo absent)"
  echo "state=$(jq -r .state "$record")"
  echo "current=$(readlink -f "$CUR")"
  echo "lastGood=$(readlink -f "$LG")"
  echo "currentVersion=$("$CUR" version --json | jq -r .version)"
  echo "lastGoodVersion=$("$LG" version --json | jq -r .version)"
  echo "copies=$(node_copies "$CUR")"
  echo "hooks=$(node_hooks)"
}
`;

/** The script that kills the process at one failpoint and starts again. */
function crashScenario(fp: FailpointName): string {
  if (fp.startsWith('upgrade/')) {
    // After one upgrade, last-good names the slot the next one writes: the case
    // where moving last-good first is what keeps a rollback target.
    const prior = fp === failpoints.upgradeLastGoodUpdated ? 'upgrade_once' : ':';
    // A judgement that rolls back stops the daemon and keeps the signal for
    // the next one, and the upgrade command waits for that one's result: it
    // is started before the command is waited for, or the wait lasts the
    // command's whole --timeout (about 70 s of nothing per such trial).
    return `real_node; install_agent; ${prior}
      mark_before; ARM="$FP" start_daemon; begin_upgrade; wait_daemon_exit
      start_daemon; wait_judged
      if ! kill -0 "$daemon_pid" 2>/dev/null; then start_daemon; wait_judged; fi
      finish_upgrade; report`;
  }
  if (fp === failpoints.judgeResultWritten) {
    return `real_node; install_agent
      mark_before; start_daemon; begin_upgrade; wait_daemon_exit
      ARM="$FP" start_daemon; wait_daemon_exit
      start_daemon; wait_judged; finish_upgrade; report`;
  }
  if (fp === failpoints.judgeFailureRecorded) {
    // The daemon starts from last-good instead of the candidate: judging records a failure.
    return `real_node; install_agent
      mark_before; start_daemon; begin_upgrade; wait_daemon_exit
      ARM="$FP" start_daemon "$(readlink -f "$LG")"; wait_daemon_exit
      start_daemon; wait_judged
      if ! kill -0 "$daemon_pid" 2>/dev/null; then start_daemon; wait_judged; fi
      finish_upgrade; report`;
  }
  // rollback/*: the recovery unit's one-shot is killed, then run again.
  return `real_node; install_agent
    mark_before; start_daemon; begin_upgrade; wait_daemon_exit
    AKS_FLEX_NODE_FAILPOINT="$FP" "$LG" recover-agent-upgrade --message "candidate failed" >>/tmp/oneshot.log 2>&1 || true
    "$LG" recover-agent-upgrade --message "candidate failed" >>/tmp/oneshot.log 2>&1
    start_daemon; wait_judged; finish_upgrade; report`;
}

describe.skipIf(unavailable !== undefined)(
  'AgentUpgrade killed at every failpoint converges',
  () => {
    // The move's failpoints have their own crash test (host-root-move-crash.test.ts),
    // and so do those of convergence from damage (converge-crash.test.ts) and
    // the helper's link (helper-link-crash.test.ts).
    // Concurrent: each trial is its own private host, and most of its time
    // is spent waiting (see runOnPrivateHostAsync).
    it.concurrent.for(
      allFailpoints
        .filter(
          (fp) =>
            !moveFailpoints.includes(fp) &&
            !convergeFailpoints.includes(fp) &&
            !helperFailpoints.includes(fp),
        )
        .map((fp) => [fp] as const),
    )('%s', { timeout: 180_000 }, async ([fp], { expect }) => {
      if (build === undefined) throw new Error('the second build is missing');
      const run = await runOnPrivateHostAsync(`${helpers}\n${crashScenario(fp)}`, 150_000, {
        ARCHIVE: build.archive,
        SHA: build.sha256,
        FP: fp,
        ...(process.env.DEBUG_CRASH === undefined ? {} : { DEBUG_CRASH: '1' }),
      });
      const seen = facts(run.stdout);
      const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
      expect(run.status, context).toBe(0);
      // The failpoint really fired: a scenario that never reached it proves nothing.
      expect(Number(seen.hits), context).toBeGreaterThanOrEqual(1);
      expect(seen.signal, context).toBe('absent');
      expect(['succeeded', 'failed', 'rolled-back'], context).toContain(seen.state);
      if (seen.state === 'succeeded') {
        // The candidate is committed: current names the other slot, and last-good what ran before.
        expect(seen.current, context).not.toBe(seen.before);
        expect(seen.lastGood, context).toBe(seen.before);
        expect(seen.currentVersion, context).toBe('0.2.0-test');
      } else {
        // Last-good is restored and current: exactly the binary that ran before.
        expect(seen.current, context).toBe(seen.before);
        expect(seen.current, context).toBe(seen.lastGood);
      }
      // Whatever happened, last-good is a binary that runs.
      expect(seen.lastGoodVersion, context).toMatch(/^\d+\.\d+\.\d+/);
      // On a real-shaped node: the active machine's copy is current, byte for
      // byte (a Go judge compares the two), the other machine's is left as
      // it was, and the machines' hooks are intact, naming a helper that is there.
      // (node_copies names a copy `current` first: with current the first build, kube2's is that too.)
      const firstIsCurrent = seen.currentVersion !== '0.2.0-test';
      expect(seen.copies, context).toBe(
        firstIsCurrent ? 'kube1:current kube2:current ' : 'kube1:current kube2:first ',
      );
      expect(seen.hooks, context).toBe('ok');
    });
  },
);
