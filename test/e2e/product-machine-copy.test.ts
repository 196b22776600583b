import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exitCodes } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import type { Host, ReleaseArchive } from './harness/index.js';
import {
  badCandidateScript,
  buildSecondRelease,
  copyReleaseIn,
  createReleaseDir,
  formatCommandResult,
  installProduct,
  packBadCandidate,
  productBinary,
  productPaths,
  productStatus,
  productUnits,
  readReleaseArchive,
  runAgentUpgrade,
  runOrThrow,
  waitForProductStatus,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { expectServingFrom, expectUpgradeSettled } from './upgrade-invariants.js';

// Issue 21 (items 2, 3) and issue 22 (item 4) on a node shaped as the Go
// releases leave it: the nspawn machine kube1's root filesystem holds a copy
// of the agent (the kubelet's exec-credential helper), kept equal to current.
// Under the product's confined units an upgrade used to fail with EROFS on
// the copy, its rollback failed the same way, and the node never took work
// again. One booted host runs the whole story.
// The version the upgrade files share, so the run builds it once
// (test/support/shared-second-builds.ts); any version but the first build's will do.
const secondVersion = '0.2.0-e2e';
const machineBin = '/var/lib/machines/kube1/usr/local/bin';
const machineCopy = `${machineBin}/aks-flex-node`;

async function sha256In(host: Host, file: string): Promise<string> {
  const result = await runOrThrow(host, ['sha256sum', file]);
  return result.stdout.split(' ')[0] ?? '';
}

/** Asserts that the machine's copy holds current's bytes, and returns the digest. */
async function expectCopyEqualsCurrent(host: Host): Promise<string> {
  const current = await sha256In(host, productPaths.currentLink);
  expect(await sha256In(host, machineCopy), `${machineCopy} against current`).toBe(current);
  return current;
}

async function upgradeTo(host: Host, release: ReleaseArchive) {
  const url = await copyReleaseIn(host, release);
  return runAgentUpgrade(host, url, release.sha256);
}

async function expectUpgradeSucceeds(host: Host, release: Release): Promise<void> {
  const upgrade = await upgradeTo(host, release);
  expect(
    upgrade.result.exitCode,
    formatCommandResult(`agent-upgrade to ${release.version}`, upgrade.result),
  ).toBe(exitCodes.ok.code);
  expect(upgrade.operation.state).toBe('succeeded');
  await expectServingFrom(host, upgrade.operation.toPath ?? '', release.version);
  expect(await sha256In(host, machineCopy)).toBe(release.binarySha256);
  await expectCopyEqualsCurrent(host);
}

/** A release with the digest of the executable inside, which the copy must equal. */
type Release = ReleaseArchive & { binarySha256: string };

describeWithProduct('product: the nspawn machine copy of the agent', () => {
  let releaseDir: string | undefined;
  let second: Release;
  let first: Release;
  beforeAll(async () => {
    releaseDir = await createReleaseDir();
    const built = await buildSecondRelease(secondVersion, releaseDir);
    second = { ...built, binarySha256: '' };
  }, 300_000);
  afterAll(async () => {
    if (releaseDir !== undefined) await rm(releaseDir, { recursive: true, force: true });
  });

  it('issue21 upgrade, bad candidate and an unwritable copy: the copy follows current, and the node takes the next upgrade', async () => {
    const hangs = await packBadCandidate(releaseDir!, 'hangs');
    const exits = await packBadCandidate(releaseDir!, 'exits-at-once');
    const hangsSha = createHash('sha256').update(badCandidateScript('hangs')).digest('hex');
    await withHost({ name: 'machine-copy' }, async (host) => {
      // The machine and its copy exist before the agent starts: the harness
      // laid out the node a Go release provisioned at the host's first boot.
      // kube2, the inactive machine, holds an older release's copy, as on a
      // node upgraded before (the Go releases keep only the active one). In
      // step 4 neither copy is then the restored last-good's: the keeper
      // finds kube1 by its copy of a slot's binary (it named neither before).
      await runOrThrow(host, [
        '/bin/bash',
        '-c',
        "printf '#!/bin/sh\\necho aks-flex-node v0.9.0\\n' > /var/lib/machines/kube2/usr/local/bin/aks-flex-node",
      ]);
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      await expectCopyEqualsCurrent(host);
      const installed = await productStatus(host);
      // The installed build's own archive, beside the executable: the upgrade after the bad candidate.
      first = {
        ...(await readReleaseArchive(path.dirname(productBinary), installed.version.version)),
        binarySha256: await sha256In(host, productPaths.currentLink),
      };
      second.binarySha256 = await sha256OfArchiveMember(host, second);

      // 1. A good upgrade: the copy is the new current.
      await expectUpgradeSucceeds(host, second);

      // 2. A bad candidate: rolled back, and the copy is current again.
      const bad = await upgradeTo(host, exits);
      expect(bad.result.exitCode, formatCommandResult('agent-upgrade', bad.result)).toBe(
        exitCodes.rolledBack.code,
      );
      const links = { current: productPaths.greenSlot, lastGood: productPaths.greenSlot };
      await expectUpgradeSettled(host, bad.operation.id, 'rolled-back', links);
      await waitForUnitState(host, productUnits.agent, 'active');
      await expectServingFrom(host, productPaths.greenSlot, secondVersion);
      expect(await expectCopyEqualsCurrent(host)).toBe(second.binarySha256);

      // 3. It takes the next upgrade.
      await expectUpgradeSucceeds(host, first);

      // 4. A copy that cannot be written back: the candidate hangs, so the
      // guard rolls it back, and the copy is made immutable once the
      // forward sync put the candidate there.
      const watched = upgradeTo(host, hangs);
      await waitFor(async () => (await sha256In(host, machineCopy)) === hangsSha, 60_000);
      await runOrThrow(host, ['chattr', '+i', machineCopy]);
      const stuck = await watched;
      expect(stuck.result.exitCode).toBe(exitCodes.rolledBack.code);
      const back = { current: productPaths.blueSlot, lastGood: productPaths.blueSlot };
      const record = await expectUpgradeSettled(host, stuck.operation.id, 'rolled-back', back);
      expect(record.message).toMatch(/copy of the agent was not restored/);
      const degraded = await waitForProductStatus(
        host,
        (status) => status.machineCopy !== undefined,
        60_000,
      );
      console.log(`status while the copy is immutable: ${JSON.stringify(degraded.machineCopy)}`);
      expect(degraded.machineCopy).toMatchObject({ machine: 'kube1', path: machineCopy });
      expect(degraded.machineCopy?.repair).toContain(`chattr -i -a ${machineCopy}`);
      // Reads are served and the gate is open: the links are the agent, and they are last-good.
      expect(degraded.startup.gate).toBe('open');
      expect(degraded.daemon.executable).toBe(productPaths.blueSlot);
      const human = await runOrThrow(host, [productPaths.installedBinary, 'status']);
      expect(human.stdout).toContain(`chattr -i -a ${machineCopy}`);

      // 5. The cause removed, the daemon's retry converges by itself.
      await runOrThrow(host, ['chattr', '-i', machineCopy]);
      await waitForProductStatus(host, (status) => status.machineCopy === undefined, 60_000);
      expect(await expectCopyEqualsCurrent(host)).toBe(first.binarySha256);
      await expectUpgradeSucceeds(host, second);
    });
  });
});

async function sha256OfArchiveMember(host: Host, release: ReleaseArchive): Promise<string> {
  await copyReleaseIn(host, release, '/var/tmp/member.tar.gz');
  const result = await runOrThrow(host, [
    'sh',
    '-c',
    'tar -xzOf /var/tmp/member.tar.gz | sha256sum && rm /var/tmp/member.tar.gz',
  ]);
  return result.stdout.split(' ')[0] ?? '';
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
