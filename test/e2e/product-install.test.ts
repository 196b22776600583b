import { expect, it } from 'vitest';
import { describeWithProduct } from './harness/describe-with-product.js';
import {
  installProduct,
  parseJsonOutput,
  productPaths,
  productUnits,
  readProductStatus,
  runOrThrow,
  runProduct,
  waitForUnitState,
  withHost,
} from './harness/index.js';

describeWithProduct('product: installed by an operator with start', () => {
  it.each(['plain', 'acl'] as const)(
    '%s host: the agent runs under systemd and answers over its socket',
    async (variant) => {
      await withHost({ variant, name: 'install' }, async (host) => {
        await installProduct(host);

        await waitForUnitState(host, productUnits.agentSocket, 'active');
        await waitForUnitState(host, productUnits.agent, 'active');
        expect(await readProductStatus(host)).toBeTypeOf('object');
        await runOrThrow(host, ['test', '-S', productPaths.socket]);
        await runOrThrow(host, ['test', '-x', productPaths.installedBinary]);
        for (const command of ['version', 'host-root']) {
          const result = await runProduct(host, [command, '--json']);
          expect(result.exitCode, result.stderr).toBe(0);
          expect(parseJsonOutput(result, `${command} --json`)).toBeTypeOf('object');
        }
      });
    },
  );
});
