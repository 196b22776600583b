import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allErrorCodes } from '@aks-flex-node/log';
import { exitCodeFor, exitCodes } from './exit-codes.js';
import { httpStatusFor } from './http-status.js';

describe('exit codes', () => {
  it('are distinct numbers', () => {
    const numbers = Object.values(exitCodes).map((entry) => entry.code);
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it('docs/cli.md shows exactly the table', async () => {
    const doc = await readFile(path.join(import.meta.dirname, '../../../docs/cli.md'), 'utf8');
    const block =
      /<!-- exit-codes:begin -->\n([\s\S]*?)<!-- exit-codes:end -->/.exec(doc)?.[1] ?? '';
    const rows = block
      .split('\n')
      .filter((line) => /^\| \d+ \|/.test(line))
      .map((line) =>
        line
          .split('|')
          .map((cell) => cell.trim())
          .filter(Boolean),
      );
    expect(rows).toEqual(
      Object.entries(exitCodes).map(([name, entry]) => [String(entry.code), name, entry.meaning]),
    );
  });

  it.each(allErrorCodes)(
    'error code %s maps to a documented exit code and an HTTP status',
    (code) => {
      expect(Object.values(exitCodes).map((entry) => entry.code)).toContain(exitCodeFor(code));
      const status = httpStatusFor(code);
      expect(status >= 400 && status < 600).toBe(true);
    },
  );

  it('refusals, busy and unreachable have their own codes', () => {
    expect(exitCodeFor('HOST_ROOT_REFUSED')).toBe(3);
    expect(exitCodeFor('ACTIVATION_IN_PROGRESS')).toBe(4);
    expect(exitCodeFor('DAEMON_UNREACHABLE')).toBe(5);
  });
});
