import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  formatCommandResult,
  installProduct,
  parseJsonOutput,
  productPaths,
  productUnits,
  waitForUnitState,
  withHost,
} from './harness/index.js';

// The restart is queued without waiting and the request is sent right
// after, so it reaches the socket while the old daemon stops or the new one
// starts; systemd holds the connection until the new daemon accepts it.
const statusDuringRestart = `systemctl restart --no-block ${productUnits.agent}
exec ${productPaths.installedBinary} status --json`;

const statusWhileStopped = `systemctl stop ${productUnits.agent}
exec ${productPaths.installedBinary} status --json`;

describeWithProduct('product: the socket outlives the daemon', () => {
  it.each([
    ['restarts', statusDuringRestart],
    ['is stopped (socket activation starts it)', statusWhileStopped],
  ])('a status request made while the agent %s is answered', async (_when, script) => {
    await withHost({ name: 'socket' }, async (host) => {
      await installProduct(host);
      await waitForUnitState(host, productUnits.agent, 'active');

      const result = await host.run(script);

      expect(result.exitCode, formatCommandResult(script, result)).toBe(0);
      expect(parseJsonOutput(result, 'status --json')).toBeTypeOf('object');
      await waitForUnitState(host, productUnits.agent, 'active');
    });
  });
});
