// Figures under real systemd (issue 13, "Under real systemd"): how long the
// agent's API goes unanswered while systemd restarts it, after a plain
// restart and after an AgentUpgrade, and how many requests fail meanwhile;
// and how soon last-good serves again after a switch to a candidate that
// cannot serve. One booted host for every run. A client inside the host
// sends GET /v1/status over a new connection every few ms; the figures come
// from its timestamps. Run through bench/systemd.sh (docs in bench/README.md).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodes, statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import type {
  BadCandidate,
  Host,
  PolledRequest,
  ReleaseArchive,
} from '../../test/e2e/harness/index.js';
import {
  badCandidateFailures,
  badCandidateVersion,
  buildSecondRelease,
  copyReleaseIn,
  createReleaseDir,
  formatCommandResult,
  installProduct,
  packBadCandidate,
  packReleaseArchive,
  productBinary,
  productPaths,
  productUnits,
  readHandOver,
  readProductStatus,
  runAgentUpgrade,
  runOrThrow,
  startStatusPoller,
  waitForProductStatus,
  waitForUnitState,
  withHost,
} from '../../test/e2e/harness/index.js';
import { readRestartTimeline, type RestartTimeline } from './restart-timeline.js';
import { repoRoot } from '../../test/e2e/harness/e2e-paths.js';

const runs = Number(process.env.RUNS ?? '5');
const out = path.resolve(repoRoot, process.env.OUT ?? 'dist/bench-systemd.json');
const secondVersion = '0.2.0-bench';
/** Pause between the poller's requests; each also costs a curl start (a few ms). */
const pollPauseMs = 5;
/** Answers from the old daemon before the change, and from the new one after it. */
const settleMs = 300;
const candidates = Object.keys(badCandidateFailures) as BadCandidate[];

/** One measured hand-over, as the JSON and the table report it. */
interface HandOverFigure {
  readonly kind: 'restart' | 'upgrade' | 'rollback';
  readonly run: string;
  /** Restart and upgrade: last answer of the old daemon to the first of the new one. */
  readonly downtimeMs?: number;
  /** Rollback: the switch to the first answer of last-good. */
  readonly rollbackMs?: number;
  readonly refused: number;
  readonly requests: number;
  readonly longestWaitMs: number;
  /** Restart and upgrade: where the downtime went, from the agent unit's journal. */
  readonly timeline?: RestartTimeline;
}

const figures: HandOverFigure[] = [];
/** The baseline for the daemon's start: `aks-flex-node version` in the same host, interleaved. */
const versionStartMs: number[] = [];

describe('under real systemd: hand-over downtime and rollback', () => {
  let releaseDir: string | undefined;
  // bench/systemd.sh names the directory and removes it, also after Ctrl-C.
  const givenReleaseDir = process.env.BENCH_SYSTEMD_RELEASES;
  beforeAll(async () => {
    releaseDir = givenReleaseDir ?? (await createReleaseDir());
  });
  afterAll(async () => {
    if (releaseDir !== undefined && givenReleaseDir === undefined) {
      await rm(releaseDir, { recursive: true, force: true });
    }
    await report();
  });

  it('measures restarts, upgrades and bad-candidate rollbacks on one host', async () => {
    const dir = releaseDir!;
    const second = await buildSecondRelease(secondVersion, dir);
    await withHost({ name: 'bench' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      const installed = await waitForGateOpen(host);
      const first = await packReleaseArchive(
        dir,
        'first',
        installed.version.version,
        await readFile(productBinary),
      );
      const releases = [
        { release: second, url: await copyReleaseIn(host, second, '/var/tmp/second.tar.gz') },
        { release: first, url: await copyReleaseIn(host, first, '/var/tmp/first.tar.gz') },
      ];

      for (let run = 1; run <= runs; run++) {
        versionStartMs.push(await measureVersionStart(host));
        figures.push(await measureRestart(host, String(run)));
      }
      for (let run = 1; run <= runs; run++) {
        // Alternates: the second build, then the first again, and so on.
        const target = releases[(run - 1) % releases.length]!;
        figures.push(await measureUpgrade(host, String(run), target.release, target.url));
      }
      for (const candidate of candidates) {
        figures.push(await measureRollback(host, candidate, dir));
      }
    });
  });
});

/** `systemctl restart` of the agent: the socket unit holds connections meanwhile. */
async function measureRestart(host: Host, run: string): Promise<HandOverFigure> {
  await waitForGateOpen(host);
  const sinceMs = Date.now();
  const polled = await pollAround(host, async () => {
    // As the product's own planned restarts do, so the runs stay inside StartLimitBurst.
    await runOrThrow(host, ['systemctl', 'reset-failed', productUnits.agent]);
    await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
    await waitForNewDaemon(host);
  });
  return handOverFigure('restart', run, polled, await readRestartTimeline(host, sinceMs));
}

/** An AgentUpgrade that succeeds: the old daemon switches and queues its own restart. */
async function measureUpgrade(
  host: Host,
  run: string,
  release: ReleaseArchive,
  url: string,
): Promise<HandOverFigure> {
  await waitForGateOpen(host);
  const sinceMs = Date.now();
  const polled = await pollAround(host, async () => {
    const upgrade = await runAgentUpgrade(host, url, release.sha256);
    expect(
      upgrade.result.exitCode,
      formatCommandResult(`agent-upgrade --url ${url}`, upgrade.result),
    ).toBe(exitCodes.ok.code);
    expect(upgrade.operation).toMatchObject({ state: 'succeeded', toVersion: release.version });
    const now = await waitForGateOpen(host);
    expect(now.version.version).toBe(release.version);
  });
  return handOverFigure(
    'upgrade',
    `${run} to ${release.version}`,
    polled,
    await readRestartTimeline(host, sinceMs),
  );
}

/** An AgentUpgrade to a candidate that cannot serve: the guard brings last-good back. */
async function measureRollback(
  host: Host,
  candidate: BadCandidate,
  dir: string,
): Promise<HandOverFigure> {
  const before = await waitForGateOpen(host);
  const release = await packBadCandidate(dir, candidate);
  const url = await copyReleaseIn(host, release, `/var/tmp/${candidate}.tar.gz`);
  let switchedAt: string | undefined;
  const polled = await pollAround(host, async () => {
    const upgrade = await runAgentUpgrade(host, url, release.sha256);
    expect(
      upgrade.result.exitCode,
      formatCommandResult(`agent-upgrade --url ${url}`, upgrade.result),
    ).toBe(exitCodes.rolledBack.code);
    expect(upgrade.operation).toMatchObject({
      state: 'rolled-back',
      toVersion: badCandidateVersion,
    });
    switchedAt = upgrade.operation.switchedAt;
    const now = await waitForGateOpen(host);
    expect(now.daemon.executable).toBe(before.daemon.executable);
    expect(now.version.version).toBe(before.version.version);
  });
  const handOver = readHandOver(polled);
  expect(switchedAt, 'the operation records when it switched').toBeDefined();
  return {
    kind: 'rollback',
    run: candidate,
    rollbackMs: Math.round(handOver.firstNewAnswerMs - Date.parse(switchedAt!)),
    refused: handOver.failed.length,
    requests: handOver.requests,
    longestWaitMs: Math.round(handOver.longestWaitMs),
  };
}

/** One `aks-flex-node version` in the host, timed there: the executable's start-up floor. */
async function measureVersionStart(host: Host): Promise<number> {
  const script = `start=$EPOCHREALTIME; ${productPaths.installedBinary} version >/dev/null; end=$EPOCHREALTIME
echo "$start $end"`;
  const [start = '', end = ''] = (await runOrThrow(host, script)).stdout.trim().split(' ');
  return Math.round((Number(end) - Number(start)) * 1000);
}

/** Runs `change` with the poller running from `settleMs` before it to `settleMs` after. */
async function pollAround(host: Host, change: () => Promise<void>): Promise<PolledRequest[]> {
  const poller = startStatusPoller(host, pollPauseMs);
  try {
    await sleep(settleMs);
    await change();
    await sleep(settleMs);
  } catch (error) {
    // Stopped either way, so a failed run leaves no client behind.
    await poller.stop().catch(() => undefined);
    throw error;
  }
  return poller.stop();
}

function handOverFigure(
  kind: 'restart' | 'upgrade',
  run: string,
  polled: readonly PolledRequest[],
  timeline: RestartTimeline | undefined,
): HandOverFigure {
  const handOver = readHandOver(polled);
  return {
    kind,
    run,
    downtimeMs: Math.round(handOver.firstNewAnswerMs - handOver.lastOldAnswerMs),
    refused: handOver.failed.length,
    requests: handOver.requests,
    longestWaitMs: Math.round(handOver.longestWaitMs),
    ...(timeline === undefined ? {} : { timeline }),
  };
}

/** Waits until a daemon takes changes and no upgrade is pending; resolves to its status. */
function waitForGateOpen(host: Host): Promise<StatusResponse> {
  return waitForProductStatus(
    host,
    (status) => status.startup.gate === 'open' && !status.activationInProgress,
    60_000,
  );
}

/** After a restart: a daemon answers again (systemctl restart returns once it started). */
async function waitForNewDaemon(host: Host): Promise<void> {
  statusResponseSchema.parse(await readProductStatus(host));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function report(): Promise<void> {
  const lines = [
    'kind      run                      downtime_ms  rollback_ms  refused  requests  longest_wait_ms  stop_ms  exec_ms  daemon_start_ms',
    ...figures.map(
      (figure) =>
        `${figure.kind.padEnd(9)} ${figure.run.padEnd(24)} ${String(figure.downtimeMs ?? '-').padStart(11)}  ` +
        `${String(figure.rollbackMs ?? '-').padStart(11)}  ${String(figure.refused).padStart(7)}  ` +
        `${String(figure.requests).padStart(8)}  ${String(figure.longestWaitMs).padStart(15)}  ` +
        `${String(figure.timeline?.stopMs ?? '-').padStart(7)}  ${String(figure.timeline?.execMs ?? '-').padStart(7)}  ` +
        String(figure.timeline?.daemonStartMs ?? '-').padStart(15),
    ),
  ];
  const daemonStarts = figures.flatMap((figure) =>
    figure.timeline === undefined ? [] : [figure.timeline.daemonStartMs],
  );
  const versionMedian = median(versionStartMs);
  const daemonStartMedian = median(daemonStarts);
  const summary = {
    daemonStartMedianMs: daemonStartMedian,
    daemonStartToVersionRatio:
      versionMedian === undefined || daemonStartMedian === undefined
        ? undefined
        : Number((daemonStartMedian / versionMedian).toFixed(2)),
    restartDowntimeMedianMs: median(downtimes('restart')),
    restartDowntimeMaxMs: max(downtimes('restart')),
    upgradeDowntimeMedianMs: median(downtimes('upgrade')),
    upgradeDowntimeMaxMs: max(downtimes('upgrade')),
    versionStartMedianMs: median(versionStartMs),
    refusedDuringRestartsAndUpgrades: figures
      .filter((figure) => figure.kind !== 'rollback')
      .reduce((sum, figure) => sum + figure.refused, 0),
    rollbackMs: Object.fromEntries(
      figures
        .filter((figure) => figure.kind === 'rollback')
        .map((figure) => [figure.run, figure.rollbackMs]),
    ),
    goals: { upgradeDowntimeMs: 1500, refused: 0, rollbackMs: 8_000 },
  };
  process.stdout.write(`\n${lines.join('\n')}\n${JSON.stringify(summary, null, 2)}\n`);
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), runs, pollPauseMs, summary, versionStartMs, figures }, null, 2)}\n`,
  );
  process.stdout.write(`wrote ${out}\n`);
}

function downtimes(kind: HandOverFigure['kind']): number[] {
  return figures.flatMap((figure) =>
    figure.kind === kind && figure.downtimeMs !== undefined ? [figure.downtimeMs] : [],
  );
}

function max(values: readonly number[]): number | undefined {
  return values.length === 0 ? undefined : Math.max(...values);
}
