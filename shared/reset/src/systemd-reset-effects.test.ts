import { unitNames } from '@aks-flex-node/layout';
import { AgentError, createSilentLogger, isAgentError } from '@aks-flex-node/log';
import type { CommandResult } from '@aks-flex-node/systemd';
import { describe, expect, it } from 'vitest';
import { agentJobIds, createSystemdResetEffects } from './systemd-reset-effects.js';

/** A runner that answers systemctl from a table of `args -> result` and records every call. */
function fakeRunner(answers: Record<string, Partial<CommandResult>>) {
  const calls: string[] = [];
  const run = (file: string, args: readonly string[]) => {
    const line = args.join(' ');
    calls.push(`${file} ${line}`);
    return Promise.resolve({ exitCode: 0, stdout: '', stderr: '', ...answers[line] });
  };
  return { run, calls };
}

describe('createSystemdResetEffects', () => {
  it("cancels the Go releases' queued restart units, this product's spaced restart units and a queued job of the agent unit, and nothing else", async () => {
    const { run, calls } = fakeRunner({
      'list-jobs --no-legend --plain': {
        stdout: `412 ${unitNames.agent} restart waiting\n413 other.service start waiting\n`,
      },
    });
    await createSystemdResetEffects(createSilentLogger(), run).cancelQueuedRestarts();
    expect(calls).toEqual([
      'systemctl stop aks-flex-node-agent-upgrade-restart-*.timer aks-flex-node-agent-upgrade-restart-*.service' +
        ' aks-flex-node-agent-restart-*.timer aks-flex-node-agent-restart-*.service',
      'systemctl list-jobs --no-legend --plain',
      'systemctl cancel 412',
    ]);
  });

  it('counts a unit systemd has not loaded as stopped, and any other failure as SYSTEMD_FAILED', async () => {
    const { run } = fakeRunner({
      [`stop ${unitNames.recovery}`]: { exitCode: 5, stderr: 'Unit not loaded.' },
      [`stop ${unitNames.agent}`]: { exitCode: 1, stderr: 'Access denied' },
    });
    const effects = createSystemdResetEffects(createSilentLogger(), run);
    await effects.stop([unitNames.recovery]);
    const error: unknown = await effects.stop([unitNames.agent]).catch((e: unknown) => e);
    expect(isAgentError(error, 'SYSTEMD_FAILED')).toBe(true);
    expect(String(error)).toContain('Access denied');
  });

  describe('terminateMachine: a machine machined knows after its unit stopped (started by hand)', () => {
    const show = 'show --property=Name --value kube1';
    /** machinectl whose `show` answers 0 for the first `knownFor` calls, then 1 (gone). */
    const machinectl = (knownFor: number, terminate: Partial<CommandResult> = {}) => {
      const calls: string[] = [];
      let shows = 0;
      const run = (file: string, args: readonly string[]) => {
        const line = args.join(' ');
        calls.push(`${file} ${line}`);
        if (line === show) {
          shows += 1;
          return Promise.resolve({ exitCode: shows <= knownFor ? 0 : 1, stdout: '', stderr: '' });
        }
        return Promise.resolve({ exitCode: 0, stdout: '', stderr: '', ...terminate });
      };
      return { run, calls };
    };
    const clock = () => {
      let now = 0;
      return { now: () => now, sleep: (ms: number) => Promise.resolve(void (now += ms)) };
    };

    it('terminates it with machinectl and waits until machined no longer knows it', async () => {
      const { run, calls } = machinectl(2);
      const effects = createSystemdResetEffects(createSilentLogger(), run, clock());
      expect(await effects.terminateMachine('kube1')).toBe(true);
      expect(calls).toEqual([
        `machinectl ${show}`,
        'machinectl terminate kube1',
        `machinectl ${show}`,
        `machinectl ${show}`,
      ]);
    });

    it('does nothing for a machine machined does not know', async () => {
      const { run, calls } = machinectl(0);
      const effects = createSystemdResetEffects(createSilentLogger(), run, clock());
      expect(await effects.terminateMachine('kube1')).toBe(false);
      expect(calls).toEqual([`machinectl ${show}`]);
    });

    it('a host without machinectl (no systemd-container) has no such machine', async () => {
      const run = () =>
        Promise.reject(
          new AgentError('SYSTEMD_FAILED', 'spawn machinectl ENOENT', {
            cause: Object.assign(new Error('spawn machinectl ENOENT'), { code: 'ENOENT' }),
          }),
        );
      const effects = createSystemdResetEffects(createSilentLogger(), run, clock());
      expect(await effects.terminateMachine('kube1')).toBe(false);
    });

    it('one that does not go within 30 s is SYSTEMD_FAILED, naming the machine and the command to run', async () => {
      const { run } = machinectl(Number.MAX_SAFE_INTEGER);
      const effects = createSystemdResetEffects(createSilentLogger(), run, clock());
      const error: unknown = await effects.terminateMachine('kube1').catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'SYSTEMD_FAILED',
        path: 'kube1',
        message: expect.stringContaining(
          'still running 30 s after machinectl terminate',
        ) as unknown,
        hint: expect.stringContaining('machinectl terminate kube1') as unknown,
      });
    });

    it('a refused terminate of a machine still there is SYSTEMD_FAILED with what machinectl said', async () => {
      const { run } = machinectl(Number.MAX_SAFE_INTEGER, { exitCode: 1, stderr: 'Access denied' });
      const effects = createSystemdResetEffects(createSilentLogger(), run, clock());
      const error: unknown = await effects.terminateMachine('kube1').catch((e: unknown) => e);
      expect(isAgentError(error, 'SYSTEMD_FAILED')).toBe(true);
      expect(String(error)).toContain('Access denied');
    });
  });

  it('agentJobIds reads only the agent unit from list-jobs output', () => {
    expect(agentJobIds(`7 ${unitNames.agent} start running\n8 x.service stop waiting\n\n`)).toEqual(
      ['7'],
    );
    expect(agentJobIds('')).toEqual([]);
  });
});
