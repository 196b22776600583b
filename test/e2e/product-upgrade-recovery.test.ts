import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { statusResponseSchema } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  badCandidateScript,
  installProduct,
  layOutFixture,
  productPaths,
  productUnits,
  waitForJournal,
  readProductStatus,
  readUnitState,
  runOrThrow,
  waitForServingDaemon,
  waitForUnitState,
  waitForProductStatus,
  withHost,
} from './harness/index.js';
import { expectServingFrom, expectUpgradeSettled, secondsSince } from './upgrade-invariants.js';

// agentbinary 5.3 and 6.5: the recovery unit restores last-good when the
// upgraded daemon cannot start and nothing else acted. The state a switch
// to a bad candidate leaves is laid out by hand, and the upgrade guard the
// agent unit pulls in is removed, so only the recovery unit can act; the
// agent then waits out RestartSec=30 between failed starts, and OnFailure=
// would start the recovery unit only after five of them, so the scenario
// starts the recovery unit itself, as OnFailure= would.
const operationName = 'manual-1';

/** What a committed switch to a candidate that exits at once leaves: signal, green slot, current. */
const switchedToBadCandidate = {
  [productPaths.signalFile]: {
    kind: 'file',
    content: JSON.stringify({
      operationName,
      candidatePath: productPaths.greenSlot,
      switchCommitted: true,
    }),
    mode: 0o600,
  },
  [productPaths.greenSlot]: {
    kind: 'file',
    content: badCandidateScript('exits-at-once'),
    mode: 0o755,
  },
  [productPaths.currentLink]: { kind: 'symlink', target: productPaths.greenSlot },
} as const;

/**
 * Restarts the agent into the candidate and waits until systemd holds it in
 * auto-restart. `--no-block`, because a start job for a process that exits
 * at once fails or succeeds depending on who is first, the exit or the job.
 */
async function restartIntoBadCandidate(host: Host): Promise<void> {
  // Without the guard: it would roll the candidate back first (product-upgrade-rollback
  // covers that). Its unit file is in /etc, which a runtime mask cannot override, so it
  // goes; the last-good daemon writes it again when it starts.
  await runOrThrow(host, ['rm', `/etc/systemd/system/${productUnits.upgradeGuard}`]);
  await runOrThrow(host, ['systemctl', 'daemon-reload']);
  await runOrThrow(host, ['systemctl', 'restart', '--no-block', productUnits.agent]);
  const deadline = Date.now() + 15_000;
  let state = await readUnitState(host, productUnits.agent);
  while (state.subState !== 'auto-restart') {
    if (Date.now() > deadline) {
      throw new Error(
        `${productUnits.agent} never reached auto-restart (last: ${state.activeState}/${state.subState})`,
      );
    }
    await sleep(100);
    state = await readUnitState(host, productUnits.agent);
  }
}

describeWithProduct('product: the recovery unit restores last-good', () => {
  it('agentbinary#6.5 a candidate that cannot start, with no guard, is rolled back by the recovery unit; issue28#7 with both slots broken it fails and says so', async () => {
    await withHost({ name: 'recovery' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      // Once its start sequence has judged (3 s after it serves): a signal
      // written before that is judged by this daemon, not the restart below.
      await waitForProductStatus(host, (s) => s.startup.gate === 'open', 60_000);
      const before = statusResponseSchema.parse(await readProductStatus(host));
      // No daemon reads these before the restart below, so their order does not matter here.
      await layOutFixture(host, switchedToBadCandidate);
      await restartIntoBadCandidate(host);

      const recoveryStartedAt = new Date().toISOString();
      await runOrThrow(host, ['systemctl', 'start', productUnits.recovery]);
      const lastGood = await waitForServingDaemon(host, {
        executable: productPaths.blueSlot,
        otherThanPid: before.daemon.pid,
      });

      const seconds = secondsSince(recoveryStartedAt, lastGood.answeredAtMs);
      console.log(
        `recovery: last-good serving ${seconds.toFixed(1)} s after the recovery unit started`,
      );
      expect(lastGood.status.version.version).toBe(before.version.version);
      const record = await expectUpgradeSettled(host, operationName, 'rolled-back', {
        current: productPaths.blueSlot,
        lastGood: productPaths.blueSlot,
      });
      expect(record.message).toContain('upgraded daemon failed repeatedly');
      const restored = `restored the last-good binary ${productPaths.blueSlot}`;
      expect(await waitForJournal(host, productUnits.recovery, restored)).toContain(restored);
      await expectServingFrom(host, productPaths.blueSlot, before.version.version);
      await waitForUnitState(host, productUnits.agent, 'active');
      await expectBothBrokenReported(host);
    });
  });
});

/**
 * issue28#7, on the same host: with every binary broken (current and
 * last-good both name the torn blue slot), the recovery unit restores
 * nothing, so systemd must log it as failed, not "Finished", and its log
 * must say why and name the reinstall command. The daemon is stopped first:
 * a running executable cannot be written (ETXTBSY).
 */
async function expectBothBrokenReported(host: Host): Promise<void> {
  await runOrThrow(host, ['systemctl', 'stop', productUnits.agentSocket, productUnits.agent]);
  await runOrThrow(host, ['truncate', '-s', '4096', productPaths.blueSlot]);
  const since = (await runOrThrow(host, ['date', '+%s.%N'])).stdout.trim();
  const started = await host.run(['systemctl', 'start', productUnits.recovery]);
  expect(started.exitCode).not.toBe(0);
  const nothingRuns = `no AKS Flex Node agent binary runs: neither current (${productPaths.blueSlot}) nor last-good (${productPaths.blueSlot}) answers 'version'; nothing was restored`;
  const journal = await waitForJournal(host, productUnits.recovery, nothingRuns, {
    since: `@${since}`,
  });
  expect(journal).toContain(nothingRuns);
  expect(journal).toMatch(
    /reinstall the agent with: curl -fsSL --create-dirs -o \/var\/lib\/aks-flex-node\/aks-flex-node-linux-(amd64|arm64)\.tar\.gz https:\/\/github\.com\/Azure\/AKSFlexNode\/releases\/latest\/download\//,
  );
  expect(journal).toMatch(/Failed to start .*Recover AKS Flex Node Agent/);
  expect(journal).not.toMatch(/Finished .*Recover AKS Flex Node Agent/);
}
