import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { collectAfterLoad } from './collect-after-load.js';

const quietMs = 1_000;

/** A collector over fake timers, `afterRequests` 3; `collections` counts its collections. */
function collector() {
  let collections = 0;
  const afterLoad = collectAfterLoad({
    collect: () => {
      collections++;
    },
    afterRequests: 3,
    quietMs,
  });
  return {
    afterLoad,
    collections: () => collections,
    requests: (count: number) => {
      for (let i = 0; i < count; i++) afterLoad.noteRequest();
    },
  };
}

describe('collectAfterLoad', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('arms nothing for fewer requests than the threshold, however long the daemon stays idle', () => {
    const { requests, collections } = collector();
    requests(2);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60 * quietMs);
    expect(collections()).toBe(0);
  });

  it('collects once a quiet spell after the threshold, and then arms nothing more', () => {
    const { requests, collections } = collector();
    requests(3);
    vi.advanceTimersByTime(quietMs);
    expect(collections()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60 * quietMs);
    expect(collections()).toBe(1);
  });

  it('does not collect while requests keep coming, and collects once they stop', () => {
    const { requests, collections } = collector();
    requests(3);
    for (let spell = 0; spell < 10; spell++) {
      vi.advanceTimersByTime(quietMs / 2);
      requests(1);
      vi.advanceTimersByTime(quietMs / 2);
    }
    expect(collections()).toBe(0);
    vi.advanceTimersByTime(2 * quietMs);
    expect(collections()).toBe(1);
  });

  it('counts again from zero after a collection', () => {
    const { requests, collections } = collector();
    requests(3);
    vi.advanceTimersByTime(quietMs);
    requests(2);
    vi.advanceTimersByTime(10 * quietMs);
    expect(collections()).toBe(1);
    requests(1);
    vi.advanceTimersByTime(quietMs);
    expect(collections()).toBe(2);
  });

  it('arms nothing and collects nothing once stopped', () => {
    const { afterLoad, requests, collections } = collector();
    requests(3);
    afterLoad.stop();
    expect(vi.getTimerCount()).toBe(0);
    requests(3);
    vi.advanceTimersByTime(10 * quietMs);
    expect(collections()).toBe(0);
  });
});
