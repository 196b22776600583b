import { describe, expect, it } from 'vitest';
import { createLogger } from '@aks-flex-node/log';
import { runCommand, type CommandRunner } from '@aks-flex-node/systemd';
import { createSystemdDaemonStopper } from './stop-daemon.js';

/** A stopper whose systemctl is `script` run by a real shell, with what it logged. */
function stopperRunning(script: string) {
  const lines: string[] = [];
  const log = createLogger({ destination: { write: (line: string) => lines.push(line) } });
  const seen: string[][] = [];
  const run: CommandRunner = (_file, args, timeoutMs) => {
    seen.push([...args]);
    return runCommand('sh', ['-c', script], timeoutMs);
  };
  return { stop: createSystemdDaemonStopper(log, run), lines, seen };
}

describe('createSystemdDaemonStopper', () => {
  it('queues the stop of the socket and the agent without waiting for it', async () => {
    const { stop, seen, lines } = stopperRunning('exit 0');
    await stop('reset r1');
    expect(seen).toEqual([
      ['--no-block', 'stop', 'aks-flex-node-agent.socket', 'aks-flex-node-agent.service'],
    ]);
    expect(lines.join('')).toContain('queued the stop of the agent unit');
  });

  it('a systemctl the queued stop itself killed with SIGTERM counts as queued', async () => {
    // What CI's journal showed after a reset: the stop reached systemctl first.
    const { stop, lines } = stopperRunning('kill -TERM $$; sleep 5');
    await expect(stop('reset r2')).resolves.toBeUndefined();
    expect(lines.join('')).toContain('the stop of the agent unit began before systemctl returned');
  });

  it('a systemctl that exits non-zero is a failure whose hint stops the socket with the agent', async () => {
    const { stop } = stopperRunning('echo "Unit not loaded" >&2; exit 5');
    await expect(stop('reset r3')).rejects.toMatchObject({
      code: 'SYSTEMD_FAILED',
      message: expect.stringMatching(/exited 5: Unit not loaded/) as unknown,
      hint: 'stop it with `systemctl stop aks-flex-node-agent.socket aks-flex-node-agent.service`',
    });
  });

  it('a systemctl killed by another signal is still a failure to stop', async () => {
    const { stop } = stopperRunning('kill -KILL $$');
    await expect(stop('reset r4')).rejects.toMatchObject({
      code: 'SYSTEMD_FAILED',
      message: expect.stringMatching(/SIGKILL/) as unknown,
    });
  });
});
