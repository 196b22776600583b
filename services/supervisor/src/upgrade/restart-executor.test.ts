import { describe, expect, it } from 'vitest';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import type { CommandRunner } from '@aks-flex-node/systemd';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
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

  it('issue 9: with reset-failed refused and the window full, the restart is queued on a timer once it fits', async () => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'restart-executor-'));
    onTestFinished(() => rm(tmp, { recursive: true, force: true }));
    const startsFile = path.join(tmp, 'agent-starts');
    // Four starts in the last 40 s of a 60 s window with a burst of 5.
    await writeFile(startsFile, '100000\n110000\n120000\n130000\n');
    const runner = fakeRunner((args) => (args[0] === 'reset-failed' ? 1 : 0));
    const show: CommandRunner = (file, args, timeoutMs) =>
      args[0] === 'show'
        ? Promise.resolve({
            exitCode: 0,
            stdout: 'StartLimitIntervalUSec=1min\nStartLimitBurst=5\n',
            stderr: '',
          })
        : runner.run(file, args, timeoutMs);
    const executor = createSystemdRestartExecutor(log, show, { startsFile, now: () => 140_000 });
    await executor.scheduleRestart('test');
    // The oldest start (100 s) leaves the window at 160 s: 20 s, plus a second of margin.
    expect(runner.calls.at(-1)).toMatch(
      /^systemd-run --quiet --collect --unit=aks-flex-node-agent-restart-\d+ --on-active=21s \/usr\/bin\/systemctl restart aks-flex-node-agent.service$/,
    );
    expect(runner.calls).not.toContain('systemctl --no-block restart aks-flex-node-agent.service');
    expect(executor.pendingDelayMs()).toBe(21_000);
  });

  it('issue 9: with reset-failed refused but room in the window, it restarts at once', async () => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'restart-executor-'));
    onTestFinished(() => rm(tmp, { recursive: true, force: true }));
    const startsFile = path.join(tmp, 'agent-starts');
    await writeFile(startsFile, '100000\n');
    const runner = fakeRunner((args) => (args[0] === 'reset-failed' ? 1 : 0));
    const executor = createSystemdRestartExecutor(log, runner.run, {
      startsFile,
      now: () => 140_000,
    });
    await executor.scheduleRestart('test');
    expect(runner.calls.at(-1)).toBe('systemctl --no-block restart aks-flex-node-agent.service');
    expect(executor.pendingDelayMs()).toBe(0);
  });
});
