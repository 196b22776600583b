import { expect, it } from 'vitest';
import { exitCodes, statusResponseSchema } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  copyReleaseIn,
  formatCommandResult,
  installProduct,
  productPaths,
  productUnits,
  readJournal,
  readProductStatus,
  runAgentUpgrade,
  useSecondRelease,
  waitForServingDaemon,
  waitForUnitState,
  withHost,
  shellPause,
} from './harness/index.js';
import { expectServingFrom, expectUpgradeSettled, secondsSince } from './upgrade-invariants.js';

// A healthy candidate on a host short of CPU (a boot, machines starting, a
// busy CI host) can take longer than the 5 s the guard gives a candidate to
// answer. The guard must tell it from one that hangs: it keeps using CPU,
// so it is waited for, and the upgrade succeeds. Here the candidate is
// starved from outside until the guard has watched it past its 5 s: kept
// stopped, and continued about every 0.7 s for one clock tick (10 ms) of
// CPU (a CPU quota would be simpler, but systemd in these containers has no
// cpu controller). The test checks, from the guard's own journal, that the
// answer came more than 5 s after the guard began to watch, or it would
// show nothing.
const secondVersion = '0.2.0-e2e';

/** A literal `$` before a brace, which a template literal would take for a substitution. */
const D = '$';

/**
 * Starves the agent unit's next main process (not OLD_PID) until the guard
 * has watched it for 6.5 s, past its 5 s, whatever the load on the machine
 * running the test (30 s at most). Prints the starved pid.
 *
 * Each slice is measured in the candidate's own CPU, not in wall time: a
 * slice timed with `sleep` and `date` lasted as long as their forks took,
 * and on a loaded CI host that let the candidate start in 4.6 s. Between
 * continue and stop only builtins run (the clock is EPOCHREALTIME, the wait
 * a read that times out), and the slice ends once /proc shows its CPU grew,
 * so the guard sees CPU used in every 2 s while the start crawls.
 */
const starveScript = String.raw`
set -euo pipefail
old=$1
deadline=$((SECONDS + 90))
while :; do
  pid=$(systemctl show -p MainPID --value aks-flex-node-agent.service)
  if [ "$pid" != 0 ] && [ "$pid" != "$old" ]; then break; fi
  if [ "$SECONDS" -ge "$deadline" ]; then echo "no new main process" >&2; exit 3; fi
  sleep 0.01
done
${shellPause}
# The candidate's CPU in clock ticks (utime + stime, fields 14 and 15).
cpu_ticks() {
  local stat fields
  read -r stat <"/proc/$pid/stat" || return 1
  read -r -a fields <<<"${D}{stat##*) }"
  ticks=$((fields[11] + fields[12]))
}
# Never leave it stopped, however this script ends.
trap 'kill -CONT "$pid" 2>/dev/null || true' EXIT
now_ms
ends=$((now + 30000))
watched=
slices=0
while now_ms && [ "$now" -lt "$ends" ]; do
  kill -STOP "$pid" 2>/dev/null || break
  # Not yet watching is no error: the guard may not have logged it yet.
  if [ -z "$watched" ]; then
    watched=$(journalctl -q -o cat -u aks-flex-node-upgrade-guard.service |
      sed -n '/"msg":"watching the upgraded daemon"/{s/.*"time":\([0-9]*\).*/\1/p;q}' || true)
    # Only a number is a time: anything else is looked for again.
    case "$watched" in *[!0-9]*) watched= ;; esac
  fi
  now_ms
  if [ -n "$watched" ] && [ "$now" -gt $((watched + 6500)) ]; then break; fi
  nap 0.7
  cpu_ticks || break
  before=$ticks
  kill -CONT "$pid" 2>/dev/null || break
  now_ms
  slice_ends=$((now + 1000))
  while cpu_ticks && [ "$ticks" -eq "$before" ] && now_ms && [ "$now" -lt "$slice_ends" ]; do
    nap 0.002
  done
  slices=$((slices + 1))
done
cpu_ticks || true
echo "starved pid $pid in $slices slices; it had used $ticks ticks of CPU when let go" >&2
echo "$pid"
`;

/** The `time` (ms) of the guard's pino line whose msg is `msg`, from its journal. */
function guardLogTime(journal: string, msg: string): number {
  const line = journal.split('\n').find((entry) => entry.includes(`"msg":"${msg}"`));
  const time = /"time":(\d+)/.exec(line ?? '')?.[1];
  expect(time, `the guard's journal has no "${msg}" line\n${journal}`).toBeDefined();
  return Number(time);
}

describeWithProduct('product: AgentUpgrade to a healthy candidate starved of CPU', () => {
  const secondRelease = useSecondRelease(secondVersion);

  it('answers later than the guard deadline to answer, keeps using CPU, and is kept, not rolled back', async () => {
    await withHost({ name: 'upgrade-starved' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      const before = statusResponseSchema.parse(await readProductStatus(host));
      const second = secondRelease();
      const url = await copyReleaseIn(host, second);
      const [upgrade, candidate, starved] = await Promise.all([
        runAgentUpgrade(host, url, second.sha256),
        waitForServingDaemon(host, {
          executable: productPaths.greenSlot,
          otherThanPid: before.daemon.pid,
          // A guard that rolls the candidate back ends here: green never serves.
          timeoutMs: 60_000,
        }),
        host.run(['bash', '-c', starveScript, 'starve', String(before.daemon.pid)], {
          timeoutMs: 120_000,
        }),
      ]);
      const seconds = secondsSince(upgrade.operation.switchedAt, candidate.answeredAtMs);
      console.log(`starved candidate: first answer ${seconds.toFixed(1)} s after the switch`);
      console.log(starved.stderr.trim());
      expect(starved.exitCode, formatCommandResult('starve', starved)).toBe(0);
      expect(candidate.status.daemon.pid, 'the process starved is the one that answered').toBe(
        Number(starved.stdout.trim()),
      );
      const guardJournal = await readJournal(host, productUnits.upgradeGuard, 200);
      expect(
        upgrade.result.exitCode,
        `${formatCommandResult(`agent-upgrade --url ${url}`, upgrade.result)}\nguard:\n${guardJournal}`,
      ).toBe(exitCodes.ok.code);
      const waitedMs =
        guardLogTime(guardJournal, 'the upgraded daemon answers') -
        guardLogTime(guardJournal, 'watching the upgraded daemon');
      console.log(`the guard saw the answer ${waitedMs} ms after it began to watch`);
      expect(
        waitedMs,
        `the guard saw the answer ${waitedMs} ms after it began to watch: starving the candidate did not slow its start past the guard's 5 s, so this run shows nothing\n${guardJournal}`,
      ).toBeGreaterThan(5_000);
      expect(upgrade.operation.state).toBe('succeeded');
      expect(guardJournal).toMatch(/the upgraded daemon answers/);
      expect(guardJournal).not.toMatch(/rolling the AgentUpgrade back/);
      await expectUpgradeSettled(host, upgrade.operation.id, 'succeeded', {
        current: productPaths.greenSlot,
        lastGood: productPaths.blueSlot,
      });
      await expectServingFrom(host, productPaths.greenSlot, secondVersion);
    });
  }, 600_000);
});
