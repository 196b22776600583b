import { describe, expect, it } from 'vitest';
import { describeOperationLine } from '../operation-lines.js';
import { downloadSize } from './upgrade-progress.js';

const MiB = 1024 * 1024;

describe('download progress as an operator reads it (issue#24.10)', () => {
  it.each([
    ['eleven MiB of 42.7, without float noise', 11 * MiB, 42.7 * MiB, ' 11.0/42.7 MiB'],
    ['a third of a MiB, rounded to one decimal', MiB / 3, 3 * MiB, ' 0.3/3.0 MiB'],
    ['no size before the download reports one (no 0/0.1 MiB start)', 0, undefined, ''],
  ])('%s', (_name, received, total, expected) => {
    expect(downloadSize(received, total)).toBe(expected);
  });

  it("an operation's line shows its progress the same way", () => {
    expect(
      describeOperationLine({
        id: 'upgrade-1',
        kind: 'agent-upgrade',
        state: 'running',
        phase: 'downloading',
        startedAt: '2026-01-01T00:00:00.000Z',
        receivedBytes: 11 * MiB,
        totalBytes: Math.round(42.7 * MiB),
      }),
    ).toBe('upgrade-1 (agent-upgrade) running, phase downloading, 11.0/42.7 MiB');
  });
});
