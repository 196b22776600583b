import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { typescriptSources } from '../support/source-files.js';

const workspace = path.resolve(import.meta.dirname, '../..');

/**
 * Every subprocess starts in one of the two runners of shared/fs: execa's
 * (run-command.ts) and the hot roles' (run-builtin.ts, which says why it
 * exists); and systemctl runs only through its wrapper, which names each call
 * and wraps its failure (issue 25).
 */
const runners = ['shared/fs/src/run-command.ts', 'shared/fs/src/run-builtin.ts'];
const systemctlWrapper = 'shared/systemd/src/systemctl.ts';

/** What a source does against the rule, one line each. */
function subprocessViolations(file: string, source: string): string[] {
  const found: string[] = [];
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  if (!runners.includes(file)) {
    if (/['"](?:node:)?child_process['"]/.test(code))
      found.push(`${file}: loads node:child_process`);
    if (/from\s+['"]execa['"]|import\(\s*['"]execa['"]/.test(code))
      found.push(`${file}: imports execa`);
  }
  if (file !== systemctlWrapper && /\(\s*['"]systemctl['"]\s*,/.test(code)) {
    found.push(`${file}: runs systemctl outside its wrapper`);
  }
  return found;
}

describe('one subprocess runner (issue 25)', () => {
  it('no source outside the runners starts a process, nor runs systemctl outside its wrapper', async () => {
    const found: string[] = [];
    for (const dir of ['shared', 'services']) {
      for (const file of await typescriptSources(path.join(workspace, dir))) {
        if (file.endsWith('.test.ts')) continue;
        const relative = path.relative(workspace, file);
        found.push(...subprocessViolations(relative, await readFile(file, 'utf8')));
      }
    }
    expect(found).toEqual([]);
  });

  it.each([
    ["import { execFile } from 'node:child_process';", 'loads node:child_process'],
    [
      "const { spawn } = process.getBuiltinModule('node:child_process');",
      'loads node:child_process',
    ],
    ["import { spawnSync } from 'child_process';", 'loads node:child_process'],
    ["import { execa } from 'execa';", 'imports execa'],
    ["await run('systemctl', ['restart', unit], 1000);", 'runs systemctl outside its wrapper'],
  ])('fails on %s', (source, why) => {
    expect(subprocessViolations('services/cli/src/x.ts', source)).toEqual([
      `services/cli/src/x.ts: ${why}`,
    ]);
    // A comment naming them is no use of them.
    expect(subprocessViolations('services/cli/src/x.ts', `// ${source}`)).toEqual([]);
  });

  it('the runners and the wrapper are where they are allowed', () => {
    expect(
      subprocessViolations(runners[1] ?? '', "process.getBuiltinModule('node:child_process')"),
    ).toEqual([]);
    expect(subprocessViolations(systemctlWrapper, "run('systemctl', args, 1)")).toEqual([]);
  });
});
