import { describe, expect, it } from 'vitest';
import { AgentError } from '@aks-flex-node/log';
import { retryWhileStarting } from './retry-while-starting.js';

const starting = (detail: string) =>
  new AgentError(
    'DAEMON_NOT_READY',
    `POST /v1/agent-upgrades refused: the daemon is starting: ${detail}`,
  );

describe('retryWhileStarting', () => {
  it('issue22#2 issue24#tty gives up at the timeout it is given (not 60 s), and tells each reason it waits for once, without the API route', async () => {
    const told: string[] = [];
    let calls = 0;
    // Moves only when the wait sleeps: the timeout is the one given, not 60 s, at no real cost.
    let now = 0;
    const clock = { now: () => now, sleep: (ms: number) => Promise.resolve(void (now += ms)) };
    const waited = retryWhileStarting(
      () => {
        calls += 1;
        return Promise.reject(
          starting(calls < 3 ? 'judging op-1' : 'setting a corrupt signal aside'),
        );
      },
      { timeoutMs: 300, intervalMs: 20, clock, onWaiting: (reason) => told.push(reason) },
    );
    await expect(waited).rejects.toMatchObject({ code: 'DAEMON_NOT_READY' });
    // Checked at 0, 20, … 300 and once past it at 320: then it gave up.
    expect(now).toBe(320);
    expect(calls).toBe(17);
    expect(told).toEqual([
      'the daemon is starting: judging op-1',
      'the daemon is starting: setting a corrupt signal aside',
    ]);
  });

  it('any other refusal comes back at once, untold', async () => {
    const told: string[] = [];
    const refusal = new AgentError('DAEMON_NOT_READY', 'refused: the daemon queued its restart');
    await expect(
      retryWhileStarting(() => Promise.reject(refusal), { onWaiting: (r) => told.push(r) }),
    ).rejects.toBe(refusal);
    expect(told).toEqual([]);
  });
});
