import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import { installProduct, waitForUnitState, productUnits, withHost } from './harness/index.js';

// `systemd-analyze verify` is run inside the host, against the units the
// product wrote there, so it checks them with the systemd that runs them.
const verifyInstalledUnits =
  'cd /etc/systemd/system && systemd-analyze verify --man=no aks-flex-node-agent.service aks-flex-node-agent.socket aks-flex-node-agent-recovery.service aks-flex-node-upgrade-guard.service 2>&1';

describeWithProduct('product: units', () => {
  it('systemd-analyze verify passes on every unit the product writes, and catches a broken one', async () => {
    await withHost({ name: 'product-units' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');

      const verified = await host.run(verifyInstalledUnits);
      expect(verified.exitCode, verified.stdout).toBe(0);
      // verify also warns without failing; a clean unit prints nothing at all.
      expect(verified.stdout.trim(), verified.stdout).toBe('');

      // The same check fails on a unit that is wrong, so the pass above means something.
      await host.run(
        "sed -i 's#^ExecStart=.*#ExecStart=/opt/unbounded/agent/missing agent#' /etc/systemd/system/aks-flex-node-agent-recovery.service",
      );
      const broken = await host.run(verifyInstalledUnits);
      expect(broken.exitCode).not.toBe(0);
      expect(broken.stdout).toContain('/opt/unbounded/agent/missing');
    });
  });
});
