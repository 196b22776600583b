import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import { copyIn, downloadedBinary, productBinary, withHost } from './harness/index.js';

describeWithProduct('product: a host whose /opt is mounted noexec', () => {
  it('start refuses with a clear error before writing any unit, and leaves no agent binary behind', async () => {
    await withHost({ variant: 'noexec', name: 'product-noexec' }, async (host) => {
      await copyIn(host, productBinary, downloadedBinary, 0o755);
      const start = await host.run([downloadedBinary, 'start']);

      expect(start.exitCode, start.stderr).toBe(7);
      expect(start.stderr).toMatch(
        /^error: the agent binary copied to \/opt\/unbounded\/agent\/bin\/aks-flex-node does not run there/m,
      );
      expect(start.stderr).toMatch(/^hint: .*noexec/m);
      // Nothing names a binary that cannot run: no units, no copy left in place.
      const leftovers = await host.run(
        'ls /etc/systemd/system/aks-flex-node* /opt/unbounded/agent/bin/aks-flex-node 2>/dev/null | wc -l',
      );
      expect(leftovers.stdout.trim()).toBe('0');
    });
  });
});
