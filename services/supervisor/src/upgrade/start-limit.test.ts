import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  parseStartLimit,
  plannedRestartDelayMs,
  readAgentStarts,
  recordAgentStart,
  shippedStartLimit,
  type StartLimit,
} from './start-limit.js';

const limit: StartLimit = shippedStartLimit; // 5 starts in 300 s

/**
 * Plays systemd's start limit: a start is refused when `burst` starts already
 * fall inside the last interval. Returns whether every start was allowed.
 */
function systemdAllows(starts: readonly number[], l: StartLimit): boolean {
  return starts.every(
    (at, index) =>
      starts.slice(0, index).filter((before) => before > at - l.intervalMs).length < l.burst,
  );
}

describe('plannedRestartDelayMs', () => {
  it('restarts at once while the window has room for it and one crash restart', () => {
    expect(plannedRestartDelayMs([0, 10_000, 20_000], 30_000, limit)).toBe(0);
  });

  it('waits until the oldest start that leaves too little room has aged out of the window', () => {
    // Four starts in the window: the planned one would leave none for a crash.
    expect(plannedRestartDelayMs([0, 10_000, 20_000, 30_000], 40_000, limit)).toBe(
      0 + 300_000 - 40_000 + 1_000,
    );
  });

  it('ten planned restarts in a row, each as soon as it is allowed, never trip the limit and leave one start for a crash', () => {
    const starts = [1_000];
    let now = 1_000;
    for (let i = 0; i < 10; i += 1) {
      now += 5_000; // the daemon came up, did an upgrade, asks to restart
      now += plannedRestartDelayMs(starts, now, limit);
      starts.push(now);
      // A crash right after (Restart= 30 s later) must still be allowed.
      expect(systemdAllows([...starts, now + 30_000], limit)).toBe(true);
    }
    expect(systemdAllows(starts, limit)).toBe(true);
  });

  it('without spacing the same ten restarts would be refused by systemd', () => {
    const starts = Array.from({ length: 11 }, (_, i) => 1_000 + i * 5_000);
    expect(systemdAllows(starts, limit)).toBe(false);
  });
});

describe('parseStartLimit', () => {
  it.each([
    ['StartLimitIntervalUSec=5min\nStartLimitBurst=5\n', { intervalMs: 300_000, burst: 5 }],
    ['StartLimitIntervalUSec=1min 30s\nStartLimitBurst=3\n', { intervalMs: 90_000, burst: 3 }],
    ['StartLimitIntervalUSec=10000000\nStartLimitBurst=4\n', { intervalMs: 10_000, burst: 4 }],
  ])('reads %j', (show, expected) => {
    expect(parseStartLimit(show)).toEqual(expected);
  });

  it('answers undefined for output it cannot read', () => {
    expect(parseStartLimit('StartLimitBurst=\n')).toBeUndefined();
  });
});

describe('the record of agent starts', () => {
  it('keeps the most recent sixteen, in order', async () => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'agent-starts-'));
    onTestFinished(() => rm(tmp, { recursive: true, force: true }));
    const file = path.join(tmp, 'run/aks-flex-node/agent-starts');
    expect(await readAgentStarts(file)).toEqual([]);
    for (let at = 1; at <= 20; at += 1) await recordAgentStart(file, at * 1000);
    const kept = await readAgentStarts(file);
    expect(kept).toHaveLength(16);
    expect(kept[0]).toBe(5_000);
    expect(kept.at(-1)).toBe(20_000);
  });
});
