import { describe, expect, it } from 'vitest';
import { throttleProgress, type DownloadProgress } from './throttle-progress.js';

describe('throttleProgress', () => {
  it('reports the first chunk, then at most one per interval, then always the final count', () => {
    let clock = 0;
    const calls: DownloadProgress[] = [];
    const throttle = throttleProgress((progress) => calls.push(progress), 1000, {
      now: () => clock,
    });
    for (let received = 10; received <= 1000; received += 10) {
      throttle.report(received);
      clock += 7; // 100 chunks over 700 ms
    }
    throttle.finish(1000);
    // t=0, 105, 210, …, 630 (seven reports) and the final one.
    expect(calls).toHaveLength(8);
    expect(calls[0]).toEqual({ receivedBytes: 10, totalBytes: 1000 });
    expect(calls.at(-1)).toEqual({ receivedBytes: 1000, totalBytes: 1000 });
  });

  it('leaves totalBytes out when it is unknown, and tolerates no callback', () => {
    const calls: DownloadProgress[] = [];
    throttleProgress((progress) => calls.push(progress), undefined).finish(5);
    expect(calls).toEqual([{ receivedBytes: 5 }]);
    expect(() => {
      throttleProgress(undefined, 5).finish(5);
    }).not.toThrow();
  });
});
