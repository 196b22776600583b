import { rmSync } from 'node:fs';
import { moveFailpoints } from '@aks-flex-node/failpoints';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrentTrials } from './concurrent-trials.js';
import { legacyHost } from './legacy-host.js';
import { bundleMoveDriver, moveHost } from './move-driver.js';
import {
  facts,
  mapConcurrently,
  namespaceUnavailable,
  runOnPrivateHost,
  runOnPrivateHostAsync,
} from './private-host.js';
import { rejoinHelpers } from './rejoin-host.js';

const unavailable = namespaceUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/reset-mid-move: ${unavailable}`);

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
  return runOnPrivateHostAsync(
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
    # The killed daemon's lockfile is refused until it is stale; never waited on.
    # Asked again soon twice, then every 2 s: each ask is a start of the
    # 135 MB CLI (about 0.2 s of CPU), and the lockfile stays fresh about
    # 10 s, which every 0.5 s made some twenty of them a trial.
    refused=0
    for _ in $(seq 1 40); do
      set +e; "$BINARY" reset --json > /tmp/reset.json 2>/tmp/reset.err; code=$?; set -e
      [ "$code" = 4 ] || break
      grep -q 'cannot start now' /tmp/reset.err /tmp/reset.json || break
      refused=$((refused + 1))
      if [ "$refused" -lt 3 ]; then nap 0.5; else nap 2; fi
    done
    echo "reset_exit=$code refused_first=$([ "$refused" -gt 0 ] && echo yes || echo no)"
    echo "reset_state=$(jq -r .state /tmp/reset.json 2>/dev/null)"
    echo "after_reset_left=$(reset_leftovers)"
    echo "after_reset_agent=$(agent_verdict)"
    echo "after_reset_daemons=$(agent_daemons)"
    rejoin_and_uninstall
    [ "$parent_before" = "$(parent_snapshot)" ] && echo parent=kept || echo parent=changed
    echo "parent_mode=$(stat -c %a /opt/unbounded)"`,
    300_000,
    { FAILPOINT: failpoint },
  );
}

describe.skipIf(unavailable !== undefined)('reset on a host the daemon was moving', () => {
  it('daemon#8.4 killed at every failpoint of the move: reset leaves one whole root and nothing of the move, a rejoin works, uninstall leaves /opt/unbounded as it was', async () => {
    const rows: string[] = [];
    const failures: string[] = [];
    // AKS_FLEX_NODE_CRASH_ONLY=<substring> narrows the run while iterating.
    const only = process.env.AKS_FLEX_NODE_CRASH_ONLY ?? '';
    // The undo's failpoints: the real daemon's copy always runs, so it never
    // undoes; the library's driver reaches them below.
    const passes = moveFailpoints.filter((name) => !name.startsWith('move/undo-'));
    const chosen = passes.filter((name) => name.includes(only));
    // Several trials at once: each is its own private host, and most of a
    // trial is the killed holder's lockfile going stale.
    const runs = await mapConcurrently(chosen, concurrentTrials, resetAfterKillAt);
    for (const [index, failpoint] of chosen.entries()) {
      const run = runs[index];
      if (run === undefined) throw new Error(`no run for ${failpoint}`);
      const seen = facts(run.stdout);
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
        seen.fired === 'yes' &&
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
        failures.push(
          `${failpoint}: status ${run.status}\n${run.stdout}\n${run.stderr.slice(-3000)}`,
        );
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

/**
 * The undo's kills, which the real daemon never reaches (its copy always
 * runs): the move library itself (test/namespace/move-driver.ts) moves a
 * host whose copy cannot run from /opt, and is killed at the failpoint while
 * it puts the host back to linked. Then the same reset, rejoin and
 * uninstall as above, with the built binary.
 */
describe.skipIf(unavailable !== undefined)('reset on a host whose move was being undone', () => {
  let driver: { file: string; dir: string } | undefined;
  beforeAll(async () => {
    driver = await bundleMoveDriver();
  }, 60_000);
  afterAll(() => {
    if (driver !== undefined) rmSync(driver.dir, { recursive: true, force: true });
  });

  it.each(moveFailpoints.filter((name) => name.startsWith('move/undo-')).map((fp) => [fp]))(
    'daemon#8.4 killed at %s: reset leaves the legacy root whole and nothing of the move; rejoin and uninstall',
    (fp) => {
      if (driver === undefined) throw new Error('the move driver was not bundled');
      const run = runOnPrivateHost(
        String.raw`${moveHost}
        ${rejoinHelpers}
        legacy_host
        parent_before=$(parent_snapshot)
        touch /etc/refuse-opt
        ARM=$FP daemon_start
        echo "driver=$last"
        echo "kill_state=$(root_state) staging=$(test -e /opt/unbounded/agent.staging && echo yes || echo no)"
        set +e; "$BINARY" reset --json > /tmp/reset.json 2>/tmp/reset.err; echo "reset_exit=$?"; set -e
        echo "reset_state=$(jq -r .state /tmp/reset.json 2>/dev/null)"
        rm /etc/refuse-opt
        echo "after_reset_left=$(reset_leftovers)"
        echo "after_reset_agent=$(agent_verdict)"
        echo "other_tool=$(cat /usr/local/bin/other-tool)"
        rejoin_and_uninstall
        [ "$parent_before" = "$(parent_snapshot)" ] && echo parent=kept || echo parent=changed`,
        180_000,
        { NODE: process.execPath, DRIVER: driver.file, FP: fp },
      );
      const seen = facts(run.stdout);
      const context = `status ${run.status}\n${run.stdout}\n${run.stderr.slice(-3000)}`;
      expect(run.status, context).toBe(0);
      expect(seen, context).toMatchObject({
        driver: 'killed',
        reset_exit: '0',
        reset_state: 'succeeded',
        after_reset_left: '',
        after_reset_agent: 'legacy',
        other_tool: 'other',
        uninstall_exit: '0',
        after_uninstall_left: '',
        parent: 'kept',
      });
      expect(seen.rejoin_state, context).toMatch(/^(installed|linked)$/);
    },
  );
});
