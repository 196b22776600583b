import path from 'node:path';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  exitCodes,
  isTerminalOperationState,
  operationSchema,
  type Operation,
} from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host, ReleaseArchive } from './harness/index.js';
import {
  copyReleaseIn,
  createReleaseDir,
  downloadedBinary,
  formatCommandResult,
  installProduct,
  packReleaseArchive,
  productPaths,
  productUnits,
  readOperationRecords,
  readReleaseArchive,
  readSlotLinks,
  runOrThrow,
  waitForProductStatus,
  waitForUnitState,
  withHost,
  shellPause,
} from './harness/index.js';
import { productBinary } from './harness/product.js';

// issue#28.3 and issue#22.6: `agent-upgrade --url` and `reset --yes` every
// 50 ms, as the adversarial pass ran them, under real systemd. On main one
// reset landed in the restart window (the old daemon gone, the new one not
// yet holding the lock): it removed the units and the signal, left the
// unjudged candidate current, lost the operation's record, and left the
// upgrade's CLI waiting until its 300 s timeout. Each run here starts the
// loop at another offset after the switch, so the resets land on the old
// daemon's exit, the socket holding requests through the restart, the new
// daemon's stability interval, its judgement and after it. Each of two hosts
// serves half the runs (one the earlier offsets, the other the later): reset
// keeps the binaries, and `start` rejoins. Every other run upgrades to a candidate whose judgement
// rolls it back.

/** How many upgrade-and-reset races one run of the suite makes. */
const racingRuns = 20;
/** Each run starts the reset loop this much later after the switch than the run before. */
const offsetStepMs = 250;
/** The upgrade's CLI must have exited this soon after the reset that succeeded. */
const upgradeExitBoundMs = 10_000;

/**
 * The other half of the runs upgrade to this small candidate: it passes the
 * check before the switch (it runs this build), but the daemon it starts runs
 * another file than the candidate, so the judgement rolls it back and a
 * second restart, into last-good, records the end. No 131 MB archive to
 * stage, and the window a reset must not slip into lasts two restarts.
 */
const rolledBackCandidate = `#!/bin/sh\nexec ${downloadedBinary} "$@"\n`;

/** What the race script inside the host saw. */
interface RaceRun {
  upgradeExit: number;
  resetExits: number[];
  /** From asking for the upgrade to its switch, from the switch to the reset that succeeded, and from that reset to the upgrade CLI's exit. */
  askToSwitchMs: number;
  switchToResetMs: number;
  resetToUpgradeExitMs: number;
  upgradeStdout: string;
  upgradeStderr: string;
  resetStderr: string;
}

/**
 * Runs the upgrade in the background, waits for its switch ("restarting"),
 * sleeps `offsetMs`, then runs `reset --yes` every 50 ms until one exits 0,
 * and waits for the upgrade's CLI. Times in ms from one clock in the host.
 */
function raceScript(url: string, sha256: string, offsetMs: number): string {
  return `set -u
bin=${productPaths.installedBinary}
out=/var/tmp/race; rm -rf "$out"; mkdir -p "$out"
# The clock, the pauses and the watch on the upgrade's output are bash
# builtins: a grep and a sleep forked every 20 ms through the staging of a
# 135 MB release kept most of a core busy, on the host whose restart window
# the resets aim at. The resets themselves are the product's CLI, as before.
${shellPause}
# The output file exists before the watch opens it (the upgrade's own
# redirection happens in its child, perhaps later).
: >"$out/upgrade.out"
exec {watch}<"$out/upgrade.out"
"$bin" agent-upgrade --url ${url} --sha256 ${sha256} --json --timeout 300 >"$out/upgrade.out" 2>"$out/upgrade.err" &
up=$!
now_ms; asked=$now
seen="" line=""
# read returns 1 at the end of what is written so far, a partial line in
# $line: appended as is, the next read goes on from there.
until [[ $seen == *'"state":"restarting"'* ]] || ! kill -0 "$up" 2>/dev/null; do
  while IFS= read -r line <&"$watch"; do seen+=$line$'\\n'; done
  seen+=$line
  [[ $seen == *'"state":"restarting"'* ]] || nap 0.02
done
now_ms; switched=$now
nap ${(offsetMs / 1000).toFixed(3)}
codes=""
for ((i = 0; i < 600; i++)); do
  "$bin" reset --yes --json >"$out/reset.out" 2>>"$out/reset.err"; rc=$?
  codes+="$rc,"
  [[ $rc == 0 ]] && break
  nap 0.05
done
now_ms; reset=$now
wait "$up"; upgrade_exit=$?
now_ms; exited=$now
echo "upgradeExit=$upgrade_exit"
echo "resetExits=\${codes%,}"
echo "askToSwitchMs=$(( switched - asked ))"
echo "switchToResetMs=$(( reset - switched ))"
echo "resetToUpgradeExitMs=$(( exited - reset ))"
`;
}

async function race(host: Host, url: string, release: ReleaseArchive, offsetMs: number) {
  const script = raceScript(url, release.sha256, offsetMs);
  const result = await host.run(['/bin/bash', '-c', script], { timeoutMs: 420_000 });
  expect(result.exitCode, formatCommandResult('the race script', result)).toBe(0);
  const fields = Object.fromEntries(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=', 2) as [string, string]),
  );
  const read = async (file: string) => (await host.run(['cat', `/var/tmp/race/${file}`])).stdout;
  const run: RaceRun = {
    upgradeExit: Number(fields.upgradeExit),
    resetExits: (fields.resetExits ?? '').split(',').map(Number),
    askToSwitchMs: Number(fields.askToSwitchMs),
    switchToResetMs: Number(fields.switchToResetMs),
    resetToUpgradeExitMs: Number(fields.resetToUpgradeExitMs),
    upgradeStdout: await read('upgrade.out'),
    upgradeStderr: await read('upgrade.err'),
    resetStderr: await read('reset.err'),
  };
  return run;
}

/** The operation the upgrade's CLI printed last: its result. */
function reportedResult(run: RaceRun): Operation | undefined {
  const last = run.upgradeStdout.trim().split('\n').at(-1) ?? '';
  try {
    const parsed = operationSchema.safeParse(JSON.parse(last));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Asserts one run's end: the resets, the upgrade CLI's exit and when, the
 * record (the one upgrade record not in `before`), and the links. Resolves
 * to the record.
 */
async function expectRunSettled(host: Host, run: RaceRun, before: readonly string[]) {
  const context = JSON.stringify(run, undefined, 2);
  // The reset that succeeded is the last; every one before it was refused (busy), never half done.
  expect(run.resetExits.at(-1), context).toBe(exitCodes.ok.code);
  for (const code of run.resetExits.slice(0, -1)) expect(code, context).toBe(exitCodes.busy.code);
  // No CLI left waiting: the upgrade's exited within seconds of the reset.
  expect(run.resetToUpgradeExitMs, context).toBeLessThanOrEqual(upgradeExitBoundMs);
  expect(
    [exitCodes.ok.code, exitCodes.rolledBack.code, exitCodes.cancelled.code],
    context,
  ).toContain(run.upgradeExit);

  // The operation's record is readable and final, and the CLI reported the same end.
  const records = await readOperationRecords(host);
  const upgrades = records.filter((r) => r.kind === 'agent-upgrade' && !before.includes(r.id));
  expect(upgrades, context).toHaveLength(1);
  const [record] = upgrades;
  if (record === undefined) return;
  expect(isTerminalOperationState(record.state), context).toBe(true);
  const reported = reportedResult(run);
  expect(reported?.id, context).toBe(record.id);
  expect(reported?.state, context).toBe(record.state);
  // issue#24.2: ended by the reset before the switch is a cancel (nothing changed), after it a rollback.
  const expectedExit =
    record.state === 'succeeded'
      ? exitCodes.ok.code
      : record.switchedAt === undefined && record.state === 'failed'
        ? exitCodes.cancelled.code
        : exitCodes.rolledBack.code;
  expect(run.upgradeExit, context).toBe(expectedExit);

  // current is a judged binary: the candidate it succeeded with, or the one it rolled back to.
  const links = await readSlotLinks(host);
  expect(links.current, context).toBe(
    record.state === 'succeeded' ? record.toPath : record.fromPath,
  );
  expect((await host.run(['test', '-e', productPaths.signalFile])).exitCode, context).not.toBe(0);
  return record;
}

/**
 * Joins the reset host again, as an operator would. The next upgrade need
 * not wait for the daemon's gate: `agent-upgrade` waits while it starts.
 */
async function rejoin(host: Host): Promise<void> {
  await runOrThrow(host, [downloadedBinary, 'start'], { timeoutMs: 180_000 });
  await waitForUnitState(host, productUnits.agent, 'active');
}

/** The runs one host makes: two hosts race at once, each over half the offsets. */
const hostCount = 2;

describeWithProduct('product: a reset racing an AgentUpgrade', () => {
  let succeeding: ReleaseArchive;
  let rollingBack: ReleaseArchive;
  let releaseDir: string | undefined;
  beforeAll(async () => {
    // This build's own archive: an upgrade to the same build, which switches slots like any other.
    // (AKS_FLEX_NODE_E2E_BINARY names another build: its archive beside it.)
    succeeding = await readReleaseArchive(path.dirname(productBinary), 'this build');
    releaseDir = await createReleaseDir();
    rollingBack = await packReleaseArchive(
      releaseDir,
      'rolled-back',
      'this build, run from elsewhere',
      rolledBackCandidate,
    );
  }, 120_000);
  afterAll(async () => {
    if (releaseDir !== undefined) await rm(releaseDir, { recursive: true, force: true });
  });

  // Concurrent: the hosts share nothing, and most of a run is waiting on
  // restarts, so two hosts at once halve the file's time (the suite's longest).
  // Each run keeps its offset and its release (the rolled-back one every other
  // run), whichever host makes it.
  it.concurrent.for(Array.from({ length: hostCount }, (_, part) => part))(
    `issue#28.3 issue#22.6 reset every 50 ms from ${racingRuns} offsets after the switch (part %i of ${hostCount}): each ends on a judged binary, with the record, and no CLI left waiting`,
    { timeout: (racingRuns / hostCount) * 60_000 },
    async (part) => {
      const indices = Array.from({ length: racingRuns }, (_, index) => index).filter(
        (index) => Math.floor(index / (racingRuns / hostCount)) === part,
      );
      await withHost({ variant: 'plain', name: `reset-race-${part}` }, async (host) => {
        await installProduct(host);
        await waitForProductStatus(host, (status) => status.startup.gate === 'open', 60_000);
        const releases = [
          { release: succeeding, url: await copyReleaseIn(host, succeeding) },
          {
            release: rollingBack,
            url: await copyReleaseIn(host, rollingBack, '/var/tmp/rolled-back.tar.gz'),
          },
        ] as const;
        const seen: string[] = [];
        const started = Date.now();
        let rejoinMs = 0;
        for (const [position, index] of indices.entries()) {
          const rejoinStarted = Date.now();
          if (position > 0) await rejoin(host);
          rejoinMs += Date.now() - rejoinStarted;
          const { release, url } = releases[index % 2] ?? releases[0];
          const run = await race(host, url, release, index * offsetStepMs);
          const record = await expectRunSettled(host, run, seen);
          if (record !== undefined) seen.push(record.id);
          process.stderr.write(
            `reset race ${index + 1}/${racingRuns}: offset ${index * offsetStepMs} ms, ` +
              `switched ${run.askToSwitchMs} ms after asking, resets ${run.resetExits.join(',')}, reset ${run.switchToResetMs} ms after the switch, ` +
              `upgrade CLI exit ${run.upgradeExit} ${run.resetToUpgradeExitMs} ms after it, ${record?.state ?? '?'}\n`,
          );
        }
        process.stderr.write(
          `reset race part ${part}: ${indices.length} runs in ${(Date.now() - started) / 1000} s, ${rejoinMs / 1000} s of it rejoining\n`,
        );
      });
    },
  );
});
