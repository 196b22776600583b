import { describe, expect, it } from 'vitest';
import { humanSentences } from './command-logger.js';

function render(entry: Record<string, unknown>): string {
  let written = '';
  humanSentences({ write: (text) => (written += text) }).write(JSON.stringify(entry));
  return written;
}

describe("a one-shot command's sentences on a terminal", () => {
  it('issue#24.10 a line about a path names it ("wrote a service asset" said five times without one)', () => {
    expect(
      render({ level: 30, msg: 'wrote a service asset', path: '/etc/systemd/system/a.service' }),
    ).toBe('wrote a service asset: /etc/systemd/system/a.service\n');
  });

  it('a warning gives the path, then the cause', () => {
    expect(
      render({ level: 40, msg: 'could not remove', path: '/x', err: { message: 'EBUSY' } }),
    ).toBe('warning: could not remove: /x: EBUSY\n');
  });

  it('a line with no path is the sentence alone', () => {
    expect(render({ level: 30, msg: 'started the agent' })).toBe('started the agent\n');
  });
});
