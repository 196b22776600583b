import { describe, expect, it } from 'vitest';
import { layOutFixture, runOrThrow, waitForUnitState, withHost } from './harness/index.js';
import { sleeperUnit, sleeperUnitFile } from './self-test-fixtures.js';

describe('harness: reboot', () => {
  it('keeps files written to /etc and brings an enabled unit back; /run starts empty', async () => {
    await withHost({ name: 'reboot' }, async (host) => {
      await layOutFixture(host, {
        '/etc/e2e-marker': { kind: 'file', content: 'written before the reboot\n' },
        '/run/e2e-marker': { kind: 'file', content: 'gone after the reboot\n' },
        [sleeperUnitFile]: { kind: 'file', content: sleeperUnit },
      });
      await runOrThrow(
        host,
        'systemctl daemon-reload && systemctl enable --now e2e-sleeper.service',
      );

      await host.reboot();

      expect((await runOrThrow(host, ['cat', '/etc/e2e-marker'])).stdout).toBe(
        'written before the reboot\n',
      );
      expect((await host.run(['test', '-e', '/run/e2e-marker'])).exitCode).toBe(1);
      await waitForUnitState(host, 'e2e-sleeper.service', 'active');
      const boots = await runOrThrow(host, ['journalctl', '--list-boots', '--no-pager', '-q']);
      expect(boots.stdout.trim().split('\n')).toHaveLength(2);
    });
  });
});
