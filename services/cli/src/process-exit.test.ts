import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { hasExited, waitForExit } from './process-exit.js';

describe('hasExited', () => {
  it('is false for a running process, true once it has ended and been reaped', async () => {
    const child = spawn('sleep', ['30']);
    const pid = child.pid ?? -1;
    expect(await hasExited(pid)).toBe(false);
    child.kill('SIGTERM');
    await once(child, 'exit');
    expect(await hasExited(pid)).toBe(true);
  });

  it('counts a zombie its parent has not reaped as ended', async () => {
    // A shell whose child exits while the shell sleeps and does not wait for it.
    const shell = spawn('sh', ['-c', 'sh -c "exit 0" & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const [line] = (await once(shell.stdout, 'data')) as [Buffer];
      const zombie = Number(line.toString().trim());
      await expect.poll(() => hasExited(zombie), { timeout: 5_000 }).toBe(true);
    } finally {
      shell.kill('SIGKILL');
    }
  });
});

describe('waitForExit', () => {
  it('answers as soon as the process ends, and false when it outlives the wait', async () => {
    const child = spawn('sleep', ['30']);
    const pid = child.pid ?? -1;
    expect(await waitForExit(pid, 150)).toBe(false);
    // Ended while the wait runs.
    const waiting = waitForExit(pid, 5_000);
    child.kill('SIGTERM');
    expect(await waiting).toBe(true);
  });
});
