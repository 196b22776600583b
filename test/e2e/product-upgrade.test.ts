import { expect, it } from 'vitest';
import { exitCodes } from '@aks-flex-node/api';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  copyReleaseIn,
  formatCommandResult,
  installProduct,
  productPaths,
  productUnits,
  readJournal,
  runAgentUpgrade,
  useSecondRelease,
  waitForUnitState,
  withHost,
} from './harness/index.js';
import { expectServingFrom, expectUpgradeSettled } from './upgrade-invariants.js';

// U2: an AgentUpgrade to a second build of the product, from the archive
// `pnpm build` makes, as an operator runs it. U7: the host keeps the
// upgraded agent across a reboot.
const secondVersion = '0.2.0-e2e';
const upgraded = { current: productPaths.greenSlot, lastGood: productPaths.blueSlot };

describeWithProduct('product: AgentUpgrade to a second build', () => {
  const secondRelease = useSecondRelease(secondVersion);

  it.each(['plain', 'acl'] as const)(
    'U2 %s host: the agent upgrades to the second build and still runs it after a reboot (U7)',
    async (variant) => {
      await withHost({ variant, name: 'upgrade' }, async (host) => {
        await installProduct(host);
        await waitForUnitState(host, productUnits.agent, 'active');
        const release = secondRelease();
        const url = await copyReleaseIn(host, release);

        const upgrade = await runAgentUpgrade(host, url, release.sha256);

        expect(
          upgrade.result.exitCode,
          formatCommandResult(`agent-upgrade --url ${url}`, upgrade.result),
        ).toBe(exitCodes.ok.code);
        expect(upgrade.operation).toMatchObject({
          state: 'succeeded',
          toVersion: secondVersion,
          fromPath: productPaths.blueSlot,
          toPath: productPaths.greenSlot,
        });
        expect(upgrade.events.map((event) => event.phase)).toEqual(
          expect.arrayContaining(['downloading', 'extracting', 'verifying', 'switching']),
        );
        await expectUpgradeSettled(host, upgrade.operation.id, 'succeeded', upgraded);
        await expectServingFrom(host, productPaths.greenSlot, secondVersion);
        // A clean hand-off logs no error: the restart the old daemon queues
        // must not be killed under it (KillMode=mixed).
        const journal = await readJournal(host, productUnits.agent, 1000);
        expect(
          journal.split('\n').filter((line) => line.includes('"level":50')),
          journal,
        ).toEqual([]);

        await host.reboot();

        await waitForUnitState(host, productUnits.agent, 'active');
        await expectServingFrom(host, productPaths.greenSlot, secondVersion);
        await expectUpgradeSettled(host, upgrade.operation.id, 'succeeded', upgraded);
      });
    },
  );
});
