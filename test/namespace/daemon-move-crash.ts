import { failpoints, moveFailpoints } from '@aks-flex-node/failpoints';
import { describe, expect, it } from 'vitest';
import { concurrentTrials } from './concurrent-trials.js';
import { legacyHost } from './legacy-host.js';
import {
  facts,
  mapConcurrently,
  namespaceUnavailable,
  runOnPrivateHostAsync,
} from './private-host.js';

// The daemon's move killed at each of its failpoints, shared by the two files
// that split the failpoints between them (daemon-move-crash-pass-1 and
// -pass-2): the trials share nothing, and as one file, small and so sorted
// last on a fresh clone, its 200 s were the namespace suite's tail.

/** Where pass 2 (the restarted daemon, from the copy) starts among the move's failpoints. */
const passTwo = moveFailpoints.indexOf(failpoints.moveFinishUnitsRewritten);
if (passTwo < 0) throw new Error(`${failpoints.moveFinishUnitsRewritten} is not a move failpoint`);
/** Pass 1: the daemon running from the legacy root, up to its restart. */
export const passOneFailpoints = moveFailpoints.slice(0, passTwo);
/** Pass 2, and the undo. */
export const passTwoFailpoints = moveFailpoints.slice(passTwo);

/**
 * The daemon's move, killed at one failpoint: the daemon is started from what
 * the agent unit names (as systemd would) with the failpoint armed until it
 * fires, then started again unarmed until it takes changes. Prints what the
 * host looked like at the kill and at the end.
 */
function crashAt(failpoint: string) {
  return runOnPrivateHostAsync(
    String.raw`${legacyHost}
    localdns_install
    # Machines and their hooks as an earlier release left them, naming its helper under /usr/local.
    real_node /usr/local
    state() { if [ -L /opt/unbounded/agent ]; then echo linked; elif [ -e /opt/unbounded/agent/.moving ]; then echo moving; elif [ -d /opt/unbounded/agent ]; then echo installed; else echo absent; fi; }
    armed=$FAILPOINT; fired=no; starts=0; ended=
    while [ $starts -lt 6 ]; do
      starts=$((starts + 1))
      AKS_FLEX_NODE_FAILPOINT=$armed run_daemon_until_exit_or_gate s$starts "$(unit_binary)" > /tmp/ended
      ended=$(cat /tmp/ended)
      if [ "$ended" = "s${'$'}{starts}_exited=137" ]; then
        fired=yes; armed=
        echo "kill_state=$(state)"
        echo "kill_unit=$(unit_binary)"
        if "$(unit_binary)" version >/dev/null 2>&1; then echo kill_unit_runs=yes; else echo kill_unit_runs=no; fi
        if "$(localdns_helper)" up >/dev/null 2>&1; then echo kill_localdns_runs=yes; else echo kill_localdns_runs=no; fi
        continue
      fi
      case "$ended" in *_gate=open) break ;; *_exited=0) continue ;; *) echo "unexpected=$ended"; break ;; esac
    done
    echo "fired=$fired starts=$starts"
    echo "end_gate=$(curl -s --unix-socket /run/aks-flex-node/agent.sock http://agent/v1/status | jq -r .startup.gate)"
    echo "end_state=$(state)"
    echo "end_unit=$(unit_binary)"
    if "$(unit_binary)" version >/dev/null 2>&1; then echo end_unit_runs=yes; else echo end_unit_runs=no; fi
    echo "end_localdns=$(localdns_helper)"
    echo "end_copies=$(node_copies "$(unit_binary)")"
    echo "end_hooks=$(node_hooks /opt/unbounded/agent)"
    echo "end_legacy_left=$(ls /usr/local/lib | wc -l) seed=$(test -e /usr/local/bin/aks-flex-node && echo kept || echo gone)"`,
    240_000,
    { FAILPOINT: failpoint },
  );
}

/**
 * The test: at each failpoint of `names` (`part`, a file's share of the move's),
 * the agent unit names a runnable binary, and starting again converges to the
 * moved host.
 */
export function describeDaemonMoveCrash(part: string, names: readonly string[]): void {
  const unavailable = namespaceUnavailable();
  if (unavailable !== undefined)
    console.warn(`SKIPPED test/namespace/daemon-move-crash (${part}): ${unavailable}`);
  describe.skipIf(unavailable !== undefined)('the daemon killed during the move', () => {
    it(`at every failpoint of ${part}, the agent unit names a runnable binary, and starting again converges to the moved host, machine copies and hooks included`, async () => {
      const rows: string[] = [];
      const failures: string[] = [];
      // AKS_FLEX_NODE_CRASH_ONLY=<substring> narrows the run while iterating.
      const only = process.env.AKS_FLEX_NODE_CRASH_ONLY ?? '';
      const chosen = names.filter((name) => name.includes(only));
      // Several trials at once: each is its own private host, and most of a
      // trial is waiting (a killed holder's lockfile going stale).
      const runs = await mapConcurrently(chosen, concurrentTrials, crashAt);
      for (const [index, failpoint] of chosen.entries()) {
        const run = runs[index];
        if (run === undefined) throw new Error(`no run for ${failpoint}`);
        const seen = facts(run.stdout);
        const undo = failpoint.startsWith('move/undo-');
        rows.push(
          [
            failpoint.padEnd(32),
            (seen.fired === undefined
              ? 'error'
              : seen.fired.split(' ')[0] === 'yes'
                ? 'killed'
                : 'not reached'
            ).padEnd(12),
            (seen.kill_state ?? '-').padEnd(9),
            (seen.kill_unit_runs ?? '-').padEnd(5),
            (seen.end_state ?? '-').padEnd(10),
            seen.end_unit_runs ?? '-',
          ].join(' '),
        );
        const ok =
          run.status === 0 &&
          seen.end_gate === 'open' &&
          seen.end_state === 'installed' &&
          seen.end_unit === '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current' &&
          seen.end_unit_runs === 'yes' &&
          seen.end_legacy_left === '0 seed=gone' &&
          seen.end_localdns === '/opt/unbounded/agent/libexec/unbounded-localdns-network' &&
          // The machines keep their copy of the agent current names, and their
          // hooks follow the helper to the host root, byte for byte as rendered.
          seen.end_copies === 'kube1:current kube2:current ' &&
          seen.end_hooks === 'ok' &&
          (seen.kill_unit_runs === undefined || seen.kill_unit_runs === 'yes') &&
          // Nor may the LocalDNS unit name a helper that is gone, at any kill.
          (seen.kill_localdns_runs === undefined || seen.kill_localdns_runs === 'yes') &&
          // The undo runs only when the copy cannot run; here it always can.
          (undo ? seen.fired?.startsWith('no') === true : seen.fired?.startsWith('yes') === true);
        if (!ok)
          failures.push(
            `${failpoint}: status ${run.status}\n${run.stdout}\n${run.stderr.slice(-2000)}`,
          );
      }
      console.log(
        [
          'failpoint                        at the kill  state     runs  end        runs',
          ...rows,
        ].join('\n'),
      );
      expect(failures).toEqual([]);
    }, 1_800_000);
  });
}
