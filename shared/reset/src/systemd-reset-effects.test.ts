import { unitNames } from '@aks-flex-node/layout';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
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

  it('agentJobIds reads only the agent unit from list-jobs output', () => {
    expect(agentJobIds(`7 ${unitNames.agent} start running\n8 x.service stop waiting\n\n`)).toEqual(
      ['7'],
    );
    expect(agentJobIds('')).toEqual([]);
  });
});
