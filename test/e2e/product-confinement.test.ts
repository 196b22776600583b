import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import { installProduct, productUnits, waitForUnitState, withHost } from './harness/index.js';

/**
 * The highest exposure `systemd-analyze security` may give each of the units.
 * The unconfined unit scored 9.6 ("UNSAFE"); the confined one must stay
 * clearly below it, and a change that drops a directive shows up here.
 */
const maxAgentExposure = 6.0;

/** Reads the "Overall exposure level for UNIT: N.N" line. */
function parseExposure(output: string): number {
  const match = /Overall exposure level for \S+: ([0-9.]+)/.exec(output);
  if (match?.[1] === undefined) throw new Error(`no exposure level in:\n${output}`);
  return Number(match[1]);
}

describeWithProduct('product: unit confinement', () => {
  it('systemd-analyze security scores the agent, upgrade guard and recovery units as confined, on a read-only /usr host with a machine', async () => {
    await withHost({ name: 'product-confinement', variant: 'acl' }, async (host) => {
      // A node's machine, so the units' optional write path to its copy is in force.
      await host.run(['install', '-d', '-m', '0755', '/var/lib/machines/kube1/usr/local/bin']);
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');
      for (const unit of [productUnits.agent, productUnits.upgradeGuard, productUnits.recovery]) {
        const analysed = await host.run(`systemd-analyze security --no-pager ${unit} 2>&1`);
        const exposure = parseExposure(analysed.stdout);
        process.stderr.write(`${unit} exposure: ${exposure}\n`);
        expect(exposure, analysed.stdout).toBeLessThanOrEqual(maxAgentExposure);
      }
    });
  });
});
