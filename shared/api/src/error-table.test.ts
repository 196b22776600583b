import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allErrorCodes } from '@aks-flex-node/log';
import { errorTable, exitCodeFor, httpStatusFor } from './error-table.js';
import { exitCodes, type ExitCodeName } from './exit-codes.js';

const docsDir = path.join(import.meta.dirname, '../../../docs');

/** The rows of the markdown table between `<!-- NAME:begin -->` and `<!-- NAME:end -->`, header and rule left out. */
async function readDocTable(file: string, name: string): Promise<string[][]> {
  const doc = await readFile(path.join(docsDir, file), 'utf8');
  const block =
    new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(doc)?.[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** The markdown a table's rows should be, printed on a mismatch so the doc can be pasted right. */
function asMarkdown(rows: string[][]): string {
  return rows.map((row) => `| ${row.join(' | ')} |`).join('\n');
}

function errorCodesExitingWith(name: ExitCodeName): string {
  const codes = allErrorCodes.filter((code) => errorTable[code].exit === name);
  return codes.length === 0 ? '' : codes.map((code) => `\`${code}\``).join(', ');
}

describe('the exit codes and the error table', () => {
  it('exit codes are distinct numbers', () => {
    const numbers = Object.values(exitCodes).map((entry) => entry.code);
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it('docs/cli.md shows exactly the exit codes, each with the error codes that end with it', async () => {
    const expected = Object.entries(exitCodes).map(([name, entry]) => [
      String(entry.code),
      name,
      entry.meaning,
      errorCodesExitingWith(name as ExitCodeName),
    ]);
    const rows = await readDocTable('cli.md', 'exit-codes');
    expect(rows, `docs/cli.md should read:\n${asMarkdown(expected)}`).toEqual(expected);
  });

  it('docs/api.md shows exactly the error table: code, HTTP status, exit code, meaning', async () => {
    const expected = allErrorCodes.map((code) => {
      const row = errorTable[code];
      return [
        `\`${code}\``,
        String(row.httpStatus),
        `${exitCodeFor(code)} ${row.exit}`,
        row.meaning,
      ];
    });
    const rows = await readDocTable('api.md', 'error-table');
    expect(rows, `docs/api.md should read:\n${asMarkdown(expected)}`).toEqual(expected);
  });

  it.each(allErrorCodes)('error code %s has an error status and a failing exit code', (code) => {
    expect(exitCodeFor(code)).not.toBe(exitCodes.ok.code);
    const status = httpStatusFor(code);
    expect(status >= 400 && status < 600).toBe(true);
  });

  // The first-boot unit and scripts read these numbers (scripts/aks-flex-node-bootstrap.bu).
  it.each([
    ['INVALID_CONFIG', 2],
    ['HOST_ROOT_REFUSED', 3],
    ['UPGRADE_REFUSED', 3],
    ['ACTIVATION_IN_PROGRESS', 4],
    ['DAEMON_UNREACHABLE', 5],
    ['UPGRADE_FAILED', 6],
    ['NOT_ROOT', 8],
    ['FETCH_FAILED', 9],
    ['OPERATION_CANCELLED', 10],
    ['OPERATION_TIMED_OUT', 11],
  ] as const)('%s exits %i', (code, exit) => {
    expect(exitCodeFor(code)).toBe(exit);
  });
});
