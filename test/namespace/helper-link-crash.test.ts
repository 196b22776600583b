import { describe, expect, it } from 'vitest';
import { failpoints, helperFailpoints } from '@aks-flex-node/failpoints';
import { facts, namespaceUnavailable, runOnPrivateHost, unmanagedDaemon } from './private-host.js';

// Issue 26 item 1: the nspawn lifecycle helper is a hard link to the running
// executable, not a third copy beside the two slots. The daemon links it at
// each start; killed (SIGKILL) at each step of that, the next start converges:
// the helper is the current slot's inode again, no temporary name is left,
// and the helper ran at every moment in between. A rollback relinks it too,
// and /opt holds two copies of the executable with both slots filled.
const unavailable = namespaceUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/helper-link-crash: ${unavailable}`);

const script = String.raw`${unmanagedDaemon}
SLOTS=/opt/unbounded/agent/lib/aks-flex-node
HELPER=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle
helper_state() { # prefix
  echo "$1Linked=$([ "$(stat -c %d:%i "$HELPER")" = "$(stat -L -c %d:%i "$CUR")" ] && echo yes || echo no)"
  echo "$1Runs=$("$HELPER" version >/dev/null 2>&1 && echo yes || echo no)"
  echo "$1Temps=$(ls -A "$(dirname "$HELPER")" | grep -c '^\.unbounded-agent-nspawn-lifecycle\..*\.tmp$' || true)"
}
# Installed by a daemon run from outside the layout ($BINARY): the helper is
# that executable's; the next daemon, run from a slot, links it to the slot.
install_agent
echo "installedRuns=$("$HELPER" version >/dev/null 2>&1 && echo yes || echo no)"
# current on a second slot (a copy of the product, a new inode), last-good on
# blue: the state an upgrade's switch leaves, whose daemon links the helper.
cp "$(readlink -f "$LG")" "$SLOTS/aks-flex-node-green"
ln -sfn "$SLOTS/aks-flex-node-green" "$CUR"
ARM="$FP" start_daemon; wait_daemon_exit
echo "hits=$(grep -c "failpoint $FP: killing" /tmp/daemon.log || true)"
echo "killedRuns=$("$HELPER" version >/dev/null 2>&1 && echo yes || echo no)"
start_daemon
helper_state upgraded
echo "gate=$("$BINARY" status --json | jq -r .startup.gate)"
stop_daemon
exe=$(stat -L -c %s "$CUR")
echo "footprint=$(du -s -B1 /opt/unbounded/agent | cut -f1)"
echo "executable=$exe"
# Rolled back: current on blue again, and its daemon links the helper to blue.
ln -sfn "$SLOTS/aks-flex-node-blue" "$CUR"
start_daemon
helper_state rolledBack
stop_daemon
`;

describe.skipIf(unavailable !== undefined)(
  'issue26 the helper link killed at each step converges',
  () => {
    it('every helper/ failpoint is killed at', () => {
      expect(helperFailpoints).toEqual([failpoints.helperLinked, failpoints.helperRenamed]);
    });

    it.each(helperFailpoints.map((fp) => [fp]))(
      '%s in the daemon start after a switch, then a rollback',
      (fp) => {
        const run = runOnPrivateHost(script, 120_000, { FP: fp });
        const seen = facts(run.stdout);
        const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
        expect(run.status, context).toBe(0);
        expect(seen, context).toMatchObject({
          installedRuns: 'yes',
          // The failpoint really fired: a run that never reached it proves nothing.
          hits: '1',
          killedRuns: 'yes',
          upgradedLinked: 'yes',
          upgradedRuns: 'yes',
          upgradedTemps: '0',
          gate: 'open',
          rolledBackLinked: 'yes',
          rolledBackRuns: 'yes',
          rolledBackTemps: '0',
        });
        // Both slots filled: two copies and the small files, not three copies.
        const ratio = Number(seen.footprint) / Number(seen.executable);
        console.log(
          `${fp}: /opt/unbounded/agent ${seen.footprint} B = ${ratio.toFixed(3)}x the executable`,
        );
        expect(ratio, context).toBeLessThan(2.1);
        expect(ratio, context).toBeGreaterThan(1.9);
      },
      150_000,
    );
  },
);

// The first start of a binary from another file system ($BINARY under
// /var/tmp, the root on a tmpfs) cannot link the helper to itself. It links
// it to the copy it has just installed, which the current slot holds: one
// copy of the executable under the root, not two. Killed at each step of
// that link, the next start converges: the helper runs the slot's bytes and
// no temporary name is left.
const firstStartScript = String.raw`${unmanagedDaemon}
HELPER=/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle
helper_facts() { # prefix
  echo "$1Linked=$([ "$(stat -c %d:%i "$HELPER")" = "$(stat -L -c %d:%i "$CUR")" ] && echo yes || echo no)"
  echo "$1Same=$(cmp -s "$HELPER" "$BINARY" && echo yes || echo no)"
  echo "$1Runs=$("$HELPER" version >/dev/null 2>&1 && echo yes || echo no)"
  echo "$1Temps=$(find /opt/unbounded -name '.*.tmp' | wc -l)"
}
mkdir -p /opt/unbounded
echo "otherFs=$([ "$(stat -c %d "$BINARY")" != "$(stat -c %d /opt/unbounded)" ] && echo yes || echo no)"
if [ -n "$FP" ]; then
  ARM="$FP" start_daemon "$BINARY"; wait_daemon_exit
  echo "hits=$(grep -c "failpoint $FP: killing" /tmp/daemon.log || true)"
fi
start_daemon "$BINARY"
helper_facts started
stop_daemon
echo "footprint=$(du -s -B1 /opt/unbounded/agent | cut -f1)"
echo "executable=$(stat -c %s "$BINARY")"
# Started again from the same binary, the daemon knows the helper holds its
# bytes from the record the first start kept: it neither copies nor compares.
: > /tmp/daemon.log
start_daemon "$BINARY"
helper_facts restarted
stop_daemon
echo "restartCopies=$(grep -c 'installed the nspawn lifecycle helper as a copy' /tmp/daemon.log || true)"
`;

describe.skipIf(unavailable !== undefined)(
  'issue26 the first start of a binary from elsewhere links the helper to the slot it installed',
  () => {
    it('links it, keeps one copy under the root, and a restart writes nothing', () => {
      const run = runOnPrivateHost(firstStartScript, 120_000, { FP: '' });
      const seen = facts(run.stdout);
      const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
      expect(run.status, context).toBe(0);
      expect(seen, context).toMatchObject({
        otherFs: 'yes',
        startedLinked: 'yes',
        startedSame: 'yes',
        startedRuns: 'yes',
        startedTemps: '0',
        restartedLinked: 'yes',
        restartCopies: '0',
      });
      // One copy of the executable and the small files: the slot and the helper share it.
      const ratio = Number(seen.footprint) / Number(seen.executable);
      expect(ratio, context).toBeLessThan(1.1);
      expect(ratio, context).toBeGreaterThan(0.9);
    });

    it.each(helperFailpoints.map((fp) => [fp]))(
      'killed at %s in that first start, the next start converges',
      (fp) => {
        const run = runOnPrivateHost(firstStartScript, 120_000, { FP: fp });
        const seen = facts(run.stdout);
        const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
        expect(run.status, context).toBe(0);
        expect(seen, context).toMatchObject({
          otherFs: 'yes',
          hits: '1',
          startedSame: 'yes',
          startedRuns: 'yes',
          startedTemps: '0',
          restartedSame: 'yes',
          restartCopies: '0',
        });
      },
      150_000,
    );
  },
);
