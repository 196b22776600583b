import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  installProduct,
  productUnits,
  readProductStatus,
  waitForUnitState,
  withHost,
} from './harness/index.js';

describeWithProduct('product: reboot', () => {
  it('an installed agent is running again after the host reboots', async () => {
    await withHost({ name: 'product-reboot' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');

      await host.reboot();

      await waitForUnitState(host, productUnits.agentSocket, 'active');
      expect(await readProductStatus(host)).toBeTypeOf('object');
      await waitForUnitState(host, productUnits.agent, 'active');
    });
  });
});
