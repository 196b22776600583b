import { setTimeout as sleep } from 'node:timers/promises';

/** The clock a poll reads and waits on; the host object is one, and tests pass a fake. */
export interface PollClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** Options for {@link pollUntil}. */
export interface PollOptions<T> {
  timeoutMs: number;
  intervalMs: number;
  /** What the poll ends with once the time is up: a value, or (usually) a thrown refusal. */
  timedOut: () => T;
  clock?: PollClock;
}

const realClock: PollClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

/**
 * Calls `check` until it answers (anything but undefined), `intervalMs`
 * apart. Once `timeoutMs` has passed after a check that did not answer, it
 * ends with `timedOut()`. Every check runs to completion: a check past the
 * deadline that answers still wins.
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined>,
  options: PollOptions<T>,
): Promise<T> {
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + options.timeoutMs;
  for (;;) {
    const answer = await check();
    if (answer !== undefined) return answer;
    if (clock.now() > deadline) return options.timedOut();
    await clock.sleep(options.intervalMs);
  }
}
