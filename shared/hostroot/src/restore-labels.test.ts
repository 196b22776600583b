import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createLogger } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { restoreLabels } from './restore-labels.js';
import { newLayout, touch } from './test-fixtures.js';

/** A logger that keeps its JSON lines. */
function recordingLogger(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return {
    log: createLogger({ destination: { write: (line: string) => lines.push(line) } }),
    lines,
  };
}

describe('restoreLabels (spec hostroot §3.10)', () => {
  it('does nothing, silently, where restorecon is not on PATH', async () => {
    const l = await newLayout();
    const { log, lines } = recordingLogger();
    await restoreLabels(l.root, log, { searchPath: path.join(l.tmp, 'empty-bin') });
    expect(lines).toEqual([]);
  });

  it('runs restorecon -R on the root when it is on PATH', async () => {
    const l = await newLayout();
    const bin = path.join(l.tmp, 'fake-bin');
    const record = path.join(l.tmp, 'restorecon-args');
    await touch(path.join(bin, 'restorecon'), `#!/bin/sh\necho "$@" > '${record}'\n`);
    await restoreLabels(l.root, recordingLogger().log, { searchPath: `relative:${bin}` });
    expect(await readFile(record, 'utf8')).toBe(`-R ${l.root}\n`);
  });

  it('logs a warning with the output when restorecon fails, and does not throw', async () => {
    const l = await newLayout();
    const bin = path.join(l.tmp, 'fake-bin');
    await touch(
      path.join(bin, 'restorecon'),
      '#!/bin/sh\necho "SELinux: policy not loaded" >&2\nexit 1\n',
    );
    const { log, lines } = recordingLogger();
    await expect(restoreLabels(l.root, log, { searchPath: bin })).resolves.toBeUndefined();
    const warning = JSON.parse(lines.join('')) as {
      level: number;
      msg: string;
      output: string;
      root: string;
    };
    expect(warning).toMatchObject({
      level: 40,
      root: l.root,
      output: 'SELinux: policy not loaded',
    });
    expect(warning.msg).toContain('restoring SELinux labels under the host root failed');
  });
});
