import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import type { OperationEvent } from '@aks-flex-node/api';
import { describeOperationLine } from '../operation-lines.js';
import { createProgressView, downloadSize } from './upgrade-progress.js';

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

describe('the progress bar on a terminal (issue 24, walkthrough on a TTY)', () => {
  it('issue24#tty a note while the bar is live starts a line of its own, and the bar goes on below it', () => {
    // The bar's terminal and stderr's notes into one transcript, in order.
    const written: string[] = [];
    const terminal = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written.push(chunk.toString());
          done();
        },
      }),
      { isTTY: true, columns: 120 },
    );
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const view = createProgressView(false, terminal);
      const event = (phase: string, receivedBytes: number): OperationEvent => ({
        seq: receivedBytes,
        state: phase === 'failed' ? 'failed' : 'running',
        phase,
        receivedBytes,
        totalBytes: 4 * MiB,
        at: '2026-01-01T00:00:00.000Z',
      });
      view.show(event('downloading', MiB));
      view.note('cancelling AgentUpgrade upgrade-1 (Ctrl-C again to stop waiting)');
      view.show(event('failed', 2 * MiB));
      view.stop();
    } finally {
      stderr.mockRestore();
    }
    const transcript = written.join('');
    // Before: the note ran on after the bar, "… 1.0/4.0 MiBcancelling AgentUpgrade …".
    expect(transcript).toContain(
      '\ncancelling AgentUpgrade upgrade-1 (Ctrl-C again to stop waiting)\n',
    );
    expect(transcript.indexOf('failed')).toBeGreaterThan(transcript.indexOf('cancelling'));
  });
});
