import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  installProduct,
  productUnits,
  readHandOver,
  readProductStatus,
  runOrThrow,
  startStatusPoller,
  waitForUnitState,
  withHost,
} from './harness/index.js';

// While systemd restarts the agent the socket unit holds every new
// connection for the next daemon, and the stopping daemon answers every
// connection it accepted: a client asking back to back, each request on a
// new connection, sees no request refused across restarts. The downtime
// itself is measured by bench/systemd.sh, not asserted here.
const restarts = 5;

describeWithProduct('product: no request refused while the agent restarts', () => {
  it(`a client polling status back to back gets every answer across ${restarts} restarts`, async () => {
    await withHost({ name: 'downtime' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');

      for (let restart = 1; restart <= restarts; restart++) {
        const poller = startStatusPoller(host, 0);
        let polled;
        try {
          await new Promise((resolve) => setTimeout(resolve, 200));
          // As the product's own planned restarts do: six starts in a row
          // would hit the unit's StartLimitBurst.
          await runOrThrow(host, ['systemctl', 'reset-failed', productUnits.agent]);
          await runOrThrow(host, ['systemctl', 'restart', productUnits.agent]);
          // Waits in the socket's queue until the new daemon answers.
          await readProductStatus(host);
          await new Promise((resolve) => setTimeout(resolve, 200));
        } finally {
          polled = await poller.stop();
        }
        // Throws when no second daemon answered: the poll must span the restart.
        const handOver = readHandOver(polled);

        expect(handOver.failed, `restart ${restart}: requests without a 200`).toEqual([]);
        expect(handOver.newPid).not.toBe(handOver.oldPid);
      }
    });
  });
});
