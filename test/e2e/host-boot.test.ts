import { describe, expect, it } from 'vitest';
import { layOutFixture, runOrThrow, waitForUnitState, withHost } from './harness/index.js';
import { sleeperUnit, sleeperUnitFile } from './self-test-fixtures.js';

describe('harness: a booted host runs real systemd', () => {
  it.each(['plain', 'acl'] as const)(
    '%s host: boots, and a unit installed in it becomes active',
    async (variant) => {
      await withHost({ variant, name: 'boot' }, async (host) => {
        // A degraded boot names the units that failed, so a flake explains itself.
        const failed = await host.run(['systemctl', '--failed', '--no-legend', '--plain']);
        expect(host.bootState(), `failed units:\n${failed.stdout}`).toBe('running');
        await layOutFixture(host, { [sleeperUnitFile]: { kind: 'file', content: sleeperUnit } });
        await runOrThrow(host, 'systemctl daemon-reload && systemctl start e2e-sleeper.service');
        const state = await waitForUnitState(host, 'e2e-sleeper.service', 'active');
        expect(state.subState).toBe('running');
      });
    },
  );

  it('a host has no Node.js and no network but loopback', async () => {
    await withHost({ name: 'isolation' }, async (host) => {
      expect((await host.run('command -v node nodejs')).exitCode).not.toBe(0);
      const links = await runOrThrow(host, 'ls /sys/class/net');
      expect(links.stdout.trim().split(/\s+/)).toEqual(['lo']);
      const virt = await runOrThrow(host, ['systemd-detect-virt', '--container']);
      expect(virt.stdout.trim()).toBe('systemd-nspawn');
    });
  });

  it('run reports exit code, stdout and stderr separately', async () => {
    await withHost({ name: 'run' }, async (host) => {
      const result = await host.run('echo out; echo err >&2; exit 7');
      expect(result).toEqual({ exitCode: 7, stdout: 'out\n', stderr: 'err\n' });
      const piped = await host.run(['cat'], { input: 'through stdin' });
      expect(piped.stdout).toBe('through stdin');
    });
  });
});
