import { createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { runCommand, signalThatEndedCommand, type CommandResult } from '@aks-flex-node/fs';
import { createSystemctl } from './systemctl.js';

/** A systemctl whose one answer is `result`; the arguments it got are kept. */
function systemctlAnswering(result: Partial<CommandResult>) {
  const seen: string[][] = [];
  const systemctl = createSystemctl({
    log: createSilentLogger(),
    run: (_file, args) => {
      seen.push([...args]);
      return Promise.resolve({ exitCode: 0, stdout: '', stderr: '', ...result });
    },
  });
  return { systemctl, seen };
}

describe('createSystemctl', () => {
  it.each<[string, Partial<CommandResult>, number]>([
    ['agentbinary§3.6.3 a running unit reports its main PID', { stdout: '4242\n' }, 4242],
    ['agentbinary§3.6.3 a stopped unit reports 0', { stdout: '0\n' }, 0],
  ])('%s', async (_name, result, pid) => {
    const { systemctl, seen } = systemctlAnswering(result);
    expect(await systemctl.mainPid('aks-flex-node-agent.service')).toBe(pid);
    expect(seen).toEqual([
      ['show', '--property=MainPID', '--value', 'aks-flex-node-agent.service'],
    ]);
  });

  it.each<[string, Partial<CommandResult>]>([
    ['agentbinary§3.6.3 an answer that is not a number', { stdout: 'garbage\n' }],
    ['agentbinary§3.6.3 a failed show', { exitCode: 1, stderr: 'Failed to connect to bus' }],
  ])('%s is SYSTEMD_FAILED, not a PID', async (_name, result) => {
    await expect(systemctlAnswering(result).systemctl.mainPid('x.service')).rejects.toMatchObject({
      code: 'SYSTEMD_FAILED',
    });
  });

  it('agentbinary§3.6.3 the unit state includes LoadState, so a missing unit is told apart', async () => {
    const { systemctl } = systemctlAnswering({
      stdout: 'LoadState=not-found\nActiveState=inactive\nSubState=dead\n',
    });
    expect(await systemctl.unitState('x.service')).toEqual({
      loadState: 'not-found',
      activeState: 'inactive',
      subState: 'dead',
    });
  });

  it('agentbinary§3.6.3 restart waits for the job and fails on a non-zero exit', async () => {
    const { systemctl, seen } = systemctlAnswering({ exitCode: 1, stderr: 'Job failed' });
    await expect(systemctl.restart('x.service')).rejects.toThrow('Job failed');
    expect(seen).toEqual([['restart', 'x.service']]);
  });
});

describe('signalThatEndedCommand', () => {
  const failureOf = (run: Promise<unknown>) =>
    run.then(
      () => expect.fail('the command was expected to fail'),
      (error: unknown) => error,
    );

  it('names the signal another process sent to end the command', async () => {
    const error = await failureOf(runCommand('sh', ['-c', 'kill -TERM $$; sleep 5'], 10_000));
    expect(signalThatEndedCommand(error)).toBe('SIGTERM');
  });

  it.each<[string, () => Promise<unknown>]>([
    ['its own timeout killed it', () => runCommand('sleep', ['5'], 100)],
    ['it could not be started', () => runCommand('/nonexistent/systemctl', [], 10_000)],
  ])('is undefined when %s', async (_name, run) => {
    expect(signalThatEndedCommand(await failureOf(run()))).toBeUndefined();
  });

  it('is undefined for an error runCommand did not throw', () => {
    expect(signalThatEndedCommand(new Error('SIGTERM'))).toBeUndefined();
  });
});
