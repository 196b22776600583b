import { describe, expect, it, vi } from 'vitest';
import {
  layOutFixture,
  productUnits,
  runOrThrow,
  waitForUnitState,
  withHost,
} from './harness/index.js';

// An agent unit whose ExecStart names a file that does not exist: the
// harness must fail loudly and explain the failure with the unit's journal
// and the layout tree.
const brokenAgentUnit = `[Unit]
Description=deliberately broken agent (e2e harness self-test)

[Service]
ExecStart=/opt/unbounded/agent/bin/aks-flex-node-missing agent
`;

const brokenInstall = {
  [`/etc/systemd/system/${productUnits.agent}`]: { kind: 'file', content: brokenAgentUnit },
  '/etc/aks-flex-node/config.json': { kind: 'file', content: '{}\n' },
  '/opt/unbounded/agent/bin': { kind: 'dir' },
} as const;

const harnessOnly = { empty: 'a check of the harness itself, which runs without a product build' };

describe('harness: a broken install fails with an explanation', () => {
  it('waitForUnitState throws with the unit journal and the layout tree', async () => {
    await withHost({ name: 'broken', node: harnessOnly }, async (host) => {
      await layOutFixture(host, brokenInstall);
      await runOrThrow(host, 'systemctl daemon-reload');
      await host.run(['systemctl', 'start', productUnits.agent]);

      const waiting = waitForUnitState(host, productUnits.agent, 'active', { timeoutMs: 3_000 });

      await expect(waiting).rejects.toThrow(
        `${productUnits.agent} on ${host.name} did not become active within 3 s`,
      );
      const message = await waiting.then(
        () => '',
        (err: unknown) => String(err),
      );
      expect(message).toContain(`--- journal of ${productUnits.agent} ---`);
      expect(message).toContain('aks-flex-node-missing');
      expect(message).toMatch(/status=203\/EXEC|No such file or directory/);
      expect(message).toContain(`--- layout on ${host.name} ---`);
      expect(message).toContain(`/etc/systemd/system/${productUnits.agent}`);
      expect(message).toContain('/etc/aks-flex-node/config.json');
      expect(message).toContain('/usr/local/bin');
    });
  });

  it('withHost prints the journals and the layout when a scenario fails, then rethrows', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const failing = withHost({ name: 'prints', node: harnessOnly }, async (host) => {
        await layOutFixture(host, brokenInstall);
        throw new Error('scenario failed on purpose');
      });
      await expect(failing).rejects.toThrow('scenario failed on purpose');
      const printed = stderr.mock.calls.map(([chunk]) => String(chunk)).join('');
      for (const unit of [productUnits.agent, productUnits.recovery, productUnits.bootstrap]) {
        expect(printed).toContain(`--- journal of ${unit} ---`);
      }
      expect(printed).toContain('/etc/aks-flex-node/config.json');
    } finally {
      stderr.mockRestore();
    }
  });
});
