import { describe, expect, it } from 'vitest';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import type { CommandRunner } from '@aks-flex-node/systemd';
import { createSystemdRestartExecutor } from './restart-executor.js';

/** A runner that records each command and answers with the status `statusFor` gives it. */
function fakeRunner(statusFor: (args: readonly string[]) => number) {
  const calls: string[] = [];
  const run: CommandRunner = (file, args) => {
    calls.push([file, ...args].join(' '));
    const exitCode = statusFor(args);
    return Promise.resolve({ exitCode, stdout: '', stderr: exitCode === 0 ? '' : 'refused' });
  };
  return { calls, run };
}

const log = createSilentLogger();

describe('the systemd restart executor', () => {
  it('agentbinary#146 runs exactly reset-failed on the agent unit, then a non-blocking restart', async () => {
    const runner = fakeRunner(() => 0);
    await createSystemdRestartExecutor(log, runner.run).scheduleRestart('test');
    expect(runner.calls).toEqual([
      'systemctl reset-failed aks-flex-node-agent.service',
      'systemctl --no-block restart aks-flex-node-agent.service',
    ]);
  });

  it('agentbinary#146 a failing reset-failed still restarts', async () => {
    const runner = fakeRunner((args) => (args[0] === 'reset-failed' ? 1 : 0));
    await createSystemdRestartExecutor(log, runner.run).scheduleRestart('test');
    expect(runner.calls.at(-1)).toBe('systemctl --no-block restart aks-flex-node-agent.service');
  });

  it('agentbinary#146 a failing restart is returned', async () => {
    const runner = fakeRunner((args) => (args.includes('restart') ? 1 : 0));
    await expect(
      createSystemdRestartExecutor(log, runner.run).scheduleRestart('test'),
    ).rejects.toSatisfy(
      (error) => isAgentError(error, 'SYSTEMD_FAILED') && error.message.includes('restart'),
    );
  });
});
