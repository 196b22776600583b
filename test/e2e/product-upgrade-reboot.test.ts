import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host } from './harness/index.js';
import {
  bootHost,
  copyReleaseIn,
  createReleaseDir,
  installProduct,
  packBadCandidate,
  productPaths,
  productUnits,
  readSlotLinks,
  runOrThrow,
  waitForServingDaemon,
  waitForUnitState,
} from './harness/index.js';
import { expectUpgradeSettled } from './upgrade-invariants.js';

// U3 with U7: the host reboots inside the guard's 10 s window, after the
// switch to a candidate that runs but never serves. The candidate never
// judges itself and never fails, so neither the judge nor OnFailure= acts:
// only the upgrade guard, which the agent unit pulls in again at the first
// start after the boot, rolls it back. (With a transient guard, as first
// built, the host stayed without a serving agent.)
const servedAgainWithinMs = 30_000;

/** Starts `agent-upgrade` as a unit of the host, so it does not hold up the host's shutdown. */
async function startAgentUpgradeUnit(host: Host, url: string, sha256: string): Promise<void> {
  await runOrThrow(host, [
    'systemd-run',
    '--quiet',
    '--collect',
    '--unit=e2e-agent-upgrade',
    productPaths.installedBinary,
    'agent-upgrade',
    '--url',
    url,
    '--sha256',
    sha256,
  ]);
}

async function waitForSwitch(host: Host, candidate: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await readSlotLinks(host)).current !== candidate) {
    if (Date.now() > deadline) throw new Error(`current never switched to ${candidate}`);
    await sleep(100);
  }
}

describeWithProduct('product: a reboot inside the guard window', () => {
  let releaseDir: string | undefined;
  beforeAll(async () => {
    releaseDir = await createReleaseDir();
  });
  afterAll(async () => {
    if (releaseDir !== undefined) await rm(releaseDir, { recursive: true, force: true });
  });

  it('U3 hangs, rebooted inside the guard window (U7): last-good serves again within 30 s of the boot', async () => {
    const release = await packBadCandidate(releaseDir!, 'hangs');
    const host = await bootHost({ name: 'guard-reboot' });
    try {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      await startAgentUpgradeUnit(host, await copyReleaseIn(host, release), release.sha256);
      await waitForSwitch(host, productPaths.greenSlot);
      const signal = await runOrThrow(host, [
        'jq',
        '-r',
        '.operationName',
        productPaths.signalFile,
      ]);

      await host.reboot();

      await waitForServingDaemon(host, {
        executable: productPaths.blueSlot,
        timeoutMs: servedAgainWithinMs,
      });
      await expectUpgradeSettled(host, signal.stdout.trim(), 'rolled-back', {
        current: productPaths.blueSlot,
        lastGood: productPaths.blueSlot,
      });
    } finally {
      await host.dispose();
    }
  });
});
