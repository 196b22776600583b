import { describe, expect, it } from 'vitest';
import { pollUntil, type PollClock } from './poll-until.js';

/** A clock that moves only when the poll sleeps. */
function fakeClock(): PollClock & { sleeps: number[] } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: (ms) => {
      sleeps.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

describe('pollUntil', () => {
  it('returns the first answer, checking intervalMs apart', async () => {
    const clock = fakeClock();
    let checks = 0;
    const answer = await pollUntil(() => Promise.resolve(++checks === 3 ? 'up' : undefined), {
      timeoutMs: 10_000,
      intervalMs: 500,
      clock,
      timedOut: () => 'never',
    });
    expect(answer).toBe('up');
    expect(clock.sleeps).toEqual([500, 500]);
  });

  it('ends with timedOut once the time is up after a check that did not answer', async () => {
    const clock = fakeClock();
    let checks = 0;
    const attempt = pollUntil(
      () => {
        checks += 1;
        return Promise.resolve(undefined);
      },
      {
        timeoutMs: 1_000,
        intervalMs: 250,
        clock,
        timedOut: () => {
          throw new Error('did not answer within 1s');
        },
      },
    );
    await expect(attempt).rejects.toThrow('did not answer within 1s');
    // Checks at 0, 250, 500, 750, 1000 and 1250: the last one is past the deadline.
    expect(checks).toBe(6);
  });

  it('a check that throws ends the poll with its error', async () => {
    const attempt = pollUntil(() => Promise.reject(new Error('refused')), {
      timeoutMs: 1_000,
      intervalMs: 250,
      clock: fakeClock(),
      timedOut: () => 'never',
    });
    await expect(attempt).rejects.toThrow('refused');
  });
});
