import { moveFailpoints } from '@aks-flex-node/failpoints';
import { describe, expect, it } from 'vitest';
import { legacyHost } from './legacy-host.js';
import { facts, namespaceUnavailable, runOnPrivateHost } from './private-host.js';
import { rejoinHelpers } from './rejoin-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined) console.warn(`SKIPPED test/namespace/reset-mid-move: ${unavailable}`);

/**
 * Reset on a host whose move the daemon was killed in (spec daemon 8.4, race
 * 1: no next start finishes a move once reset removed the units). The daemon
 * moves a legacy host (this build under /usr/local, so the move is ready) and
 * is killed (SIGKILL) at the failpoint, holding the activation lock; then:
 * reset, which takes that lock once the dead holder's lockfile is stale and
 * refuses until then; a rejoin with install.sh and the agent started again;
 * uninstall.sh. Prints what each step left.
 */
function resetAfterKillAt(failpoint: string) {
  return runOnPrivateHost(
    String.raw`${legacyHost}
    ${rejoinHelpers}
    stage_parent
    parent_before=$(parent_snapshot)
    state() { if [ -L /opt/unbounded/agent ]; then echo linked; elif [ -e /opt/unbounded/agent/.moving ]; then echo moving; elif [ -d /opt/unbounded/agent ]; then echo installed; else echo absent; fi; }
    armed=$FAILPOINT; fired=no
    for start in 1 2 3 4; do
      AKS_FLEX_NODE_FAILPOINT=$armed run_daemon_until_exit_or_gate s$start "$(unit_binary)" > /tmp/ended
      case "$(cat /tmp/ended)" in
        *_exited=137) fired=yes; break ;;
        *_exited=0) continue ;; # pass 1 queued its restart: start again from what the unit names
        *) break ;;             # the move finished before the failpoint: not reached
      esac
    done
    echo "fired=$fired"
    echo "kill_state=$(state) staging=$(test -e /opt/unbounded/agent.staging && echo yes || echo no)"
    if [ "$fired" = no ]; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
    # The killed daemon's lockfile is refused until it is stale; never waited on.
    refused=0
    for _ in $(seq 1 40); do
      set +e; "$BINARY" reset --json > /tmp/reset.json 2>/tmp/reset.err; code=$?; set -e
      [ "$code" = 4 ] || break
      grep -q 'activation in progress' /tmp/reset.err /tmp/reset.json || break
      refused=$((refused + 1)); sleep 0.5
    done
    echo "reset_exit=$code refused_first=$([ "$refused" -gt 0 ] && echo yes || echo no)"
    echo "reset_state=$(jq -r .state /tmp/reset.json 2>/dev/null)"
    echo "after_reset_left=$(reset_leftovers)"
    echo "after_reset_agent=$(agent_verdict)"
    echo "after_reset_daemons=$(agent_daemons)"
    rejoin
    set +e; bash "$SCRIPTS/uninstall.sh" --force > /tmp/uninstall.out 2>&1; echo "uninstall_exit=$?"; set -e
    echo "after_uninstall_left=$(agent_leftovers)"
    [ "$parent_before" = "$(parent_snapshot)" ] && echo parent=kept || echo parent=changed
    echo "parent_mode=$(stat -c %a /opt/unbounded)"`,
    300_000,
    { FAILPOINT: failpoint },
  );
}

describe.skipIf(unavailable !== undefined)('reset on a host the daemon was moving', () => {
  it('daemon#8.4 killed at every failpoint of the move: reset leaves one whole root and nothing of the move, a rejoin works, uninstall leaves /opt/unbounded as it was', () => {
    const rows: string[] = [];
    const failures: string[] = [];
    // AKS_FLEX_NODE_CRASH_ONLY=<substring> narrows the run while iterating.
    const only = process.env.AKS_FLEX_NODE_CRASH_ONLY ?? '';
    for (const failpoint of moveFailpoints.filter((name) => name.includes(only))) {
      const run = resetAfterKillAt(failpoint);
      const seen = facts(run.stdout);
      // The undo runs only when the copy cannot run; the real daemon's copy always can.
      const reachable = !failpoint.startsWith('move/undo-');
      rows.push(
        [
          failpoint.padEnd(30),
          (seen.fired === 'yes' ? 'killed' : 'not reached').padEnd(12),
          (seen.kill_state ?? '-').padEnd(22),
          (seen.refused_first === 'yes' ? 'refused, then ok' : (seen.reset_state ?? '-')).padEnd(
            17,
          ),
          (seen.after_reset_agent ?? '-').padEnd(10),
          (seen.rejoin_dir ?? '-').padEnd(26),
          (seen.rejoin_state ?? '-').padEnd(10),
          seen.parent ?? '-',
        ].join(' '),
      );
      const ok =
        run.status === 0 &&
        seen.fired === (reachable ? 'yes' : 'no') &&
        seen.reset_exit?.startsWith('0') === true &&
        seen.reset_state === 'succeeded' &&
        seen.after_reset_left === '' &&
        (seen.after_reset_agent === 'legacy' || seen.after_reset_agent === 'host-root') &&
        seen.after_reset_daemons === '0' &&
        seen.rejoin_state !== undefined &&
        seen.uninstall_exit === '0' &&
        seen.after_uninstall_left === '' &&
        seen.parent === 'kept' &&
        seen.parent_mode === '750';
      if (!ok)
        failures.push(`${failpoint}: status ${run.status}\n${run.stdout}\n${run.stderr.slice(-3000)}`);
    }
    console.log(
      [
        '',
        'reset on a host whose move was killed at each failpoint, then a rejoin and uninstall',
        'failpoint                      daemon       at the kill            reset             agent in   rejoined into              as         /opt/unbounded',
        ...rows,
      ].join('\n'),
    );
    expect(failures).toEqual([]);
  }, 3_600_000);
});
