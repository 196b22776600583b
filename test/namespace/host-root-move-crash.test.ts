import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failpoints, moveFailpoints, type FailpointName } from '@aks-flex-node/failpoints';
import { bundleMoveDriver, moveHost } from './move-driver.js';
import { moveSuiteUnavailable } from './move-suite.js';
import { facts, runOnPrivateHost } from './private-host.js';

// Crash safety of the host-root move, tested rather than argued: on a private
// host laid out as an earlier release left it, the move is killed (SIGKILL)
// at each of its failpoints, then started again the way systemd would start
// the agent, from whatever its unit names, until it settles. Every start must
// find a runnable agent at the unit's path, and the host must end moved with
// nothing lost, or, while the copy cannot run, linked.
const unavailable = moveSuiteUnavailable();
if (unavailable !== undefined)
  console.warn(`SKIPPED test/namespace/host-root-move-crash: ${unavailable}`);

let driver: { file: string; dir: string } | undefined;
beforeAll(async () => {
  if (unavailable === undefined) driver = await bundleMoveDriver();
}, 60_000);

const table: string[] = [];
afterAll(() => {
  if (driver !== undefined) rmSync(driver.dir, { recursive: true, force: true });
  if (table.length > 0) {
    const header =
      'failpoint                     | state at kill | agent unit names                                             | runs | starts | held linked while the copy cannot run | end';
    console.log(['', 'host-root move: killed at each failpoint', header, ...table].join('\n'));
  }
});

const undoFailpoints: readonly FailpointName[] = [
  failpoints.moveUndoUnitsPointedBack,
  failpoints.moveUndoStagingCleared,
  failpoints.moveUndoRootSetAside,
  failpoints.moveUndoRelinked,
  failpoints.moveUndoCopyRemoved,
];

/**
 * Arms the failpoint until it fires once, then starts unarmed until the move
 * settles. For the undo's failpoints the copy cannot run (/etc/refuse-opt)
 * until one start after the kill has ended with the host linked again.
 */
const scenario = String.raw`
legacy_host
[ "$UNDO" = yes ] && touch /etc/refuse-opt
hit=no starts=0 always=yes killState=- killUnit=- killRuns=- held=-
for _ in 1 2 3 4 5 6 7 8; do
  if [ "$hit" = no ]; then ARM=$FP; else ARM=; fi
  daemon_start
  starts=$((starts + 1))
  [ "$(unit_runs)" = yes ] || always=no
  if [ "$last" = killed ]; then
    hit=yes killState=$(root_state) killUnit=$(unit_binary) killRuns=$(unit_runs)
    continue
  fi
  if [ "$hit" = yes ] && [ -e /etc/refuse-opt ]; then
    held="$(root_state):$(printf '%s' "$last" | jq -r '.error.code // .outcome.kind')"
    rm /etc/refuse-opt
    continue
  fi
  case "$last" in *'"moved"'* | *'"left-alone"'*) [ "$hit" = yes ] && break ;; esac
done
C=/opt/unbounded/agent
echo "hits=$(grep -c "failpoint $FP: killing" /tmp/driver.log || true)"
echo "last=$last"
echo "killState=$killState"
echo "killUnit=$killUnit"
echo "killRuns=$killRuns"
echo "always=$always"
echo "held=$held"
echo "starts=$starts"
echo "state=$(root_state)"
echo "unit=$(unit_binary)"
echo "runs=$(unit_runs)"
echo "legacyLeft=$(legacy_left)"
echo "libDir=$([ -e /usr/local/lib/aks-flex-node ] && echo present || echo absent)"
echo "otherTool=$(cat /usr/local/bin/other-tool)"
echo "staging=$([ -e $C.staging ] && echo present || echo absent)"
echo "record=$([ -e /etc/aks-flex-node/host-root-agents ] && echo present || echo absent)"
echo "artifacts=$(cat /opt/unbounded/artifacts/manifest.json) $(stat -c %a /opt/unbounded)"
echo "copy=$($C/lib/aks-flex-node/aks-flex-node-current version) $($C/lib/aks-flex-node/aks-flex-node-last-good version) $($C/bin/aks-flex-node version) $($C/bin/unbounded-agent-nspawn-lifecycle version) $(cat $C/libexec/unbounded-localdns-network) $(stat -c %a $C/libexec/unbounded-localdns-network)"
echo "links=$(readlink $C/lib/aks-flex-node/aks-flex-node-current) $(readlink $C/bin/aks-flex-node)"
`;

describe.skipIf(unavailable !== undefined)(
  'the host-root move killed at every failpoint converges',
  () => {
    it.each(moveFailpoints.map((fp) => [fp]))('%s', (fp) => {
      if (driver === undefined) throw new Error('the move driver was not bundled');
      const undo = undoFailpoints.includes(fp);
      const run = runOnPrivateHost(`${moveHost}\n${scenario}`, 120_000, {
        NODE: process.execPath,
        DRIVER: driver.file,
        FP: fp,
        UNDO: undo ? 'yes' : 'no',
      });
      const seen = facts(run.stdout);
      const context = `status ${run.status}\n${run.stdout}\n${run.stderr}`;
      expect(run.status, context).toBe(0);
      // The failpoint really fired: a scenario that never reached it proves nothing.
      expect(Number(seen.hits), context).toBe(1);
      // At the kill and after every start, the agent unit names an agent that runs.
      expect(seen.killRuns, context).toBe('yes');
      expect(seen.always, context).toBe('yes');
      // While the copy cannot run, the host is linked again, and says why.
      expect(seen.held, context).toBe(undo ? 'linked:NOT_EXECUTABLE' : '-');
      // Then it converges to the moved state, with nothing lost.
      expect(seen.state, context).toBe('installed');
      expect(seen.unit, context).toBe(
        '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current',
      );
      expect(seen.runs, context).toBe('yes');
      expect(seen.legacyLeft, context).toBe('0');
      expect(seen.libDir, context).toBe('absent');
      expect(seen.otherTool, context).toBe('other');
      expect(seen.staging, context).toBe('absent');
      expect(seen.record, context).toBe('absent');
      expect(seen.artifacts, context).toBe('manifest 750');
      expect(seen.copy, context).toBe('green blue green helper dns 700');
      expect(seen.links, context).toBe(
        '/opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-green /opt/unbounded/agent/lib/aks-flex-node/aks-flex-node-current',
      );
      table.push(
        [
          fp.padEnd(29),
          (seen.killState ?? '').padEnd(13),
          (seen.killUnit ?? '').padEnd(60),
          (seen.killRuns ?? '').padEnd(4),
          (seen.starts ?? '').padEnd(6),
          (seen.held ?? '').padEnd(38),
          `${seen.state ?? ''}, ${seen.legacyLeft ?? ''} legacy files left`,
        ].join(' | '),
      );
    });
  },
);
