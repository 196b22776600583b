/**
 * Real sleeps and timed asserts in unit tests (issue 25). A unit test that
 * sleeps for a fixed time is slow when the machine is idle and flaky when it
 * is loaded; one that asserts how long something took fails on a busy CI
 * runner for no fault of the code. Unit tests move time with fake timers or
 * an injected clock, and wait for the event they need (a child's message, a
 * log line, a server's request), never for a fixed time.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { typescriptSources } from '../support/source-files.js';

/** One finding: the file (relative to the workspace), its line, and the rule it breaks. */
export interface RealWait {
  file: string;
  line: number;
  rule: RealWaitRule;
}

export type RealWaitRule = 'real timer' | 'real sleep' | 'wall-clock stamp';

const rules: readonly { rule: RealWaitRule; pattern: RegExp }[] = [
  // A timer of the global clock: a sleep, a delayed action or a race against time.
  { rule: 'real timer', pattern: /(?<![\w.])(?:globalThis\.)?set(?:Timeout|Interval)\s*\(/ },
  // node:timers/promises' timers and scheduler, and a blocking wait.
  {
    rule: 'real sleep',
    pattern:
      /\b(?:setTimeout|setInterval|scheduler)\b[^;]*?from\s*['"](?:node:)?timers\/promises['"]|\bscheduler\.wait\s*\(|\bAtomics\.wait\s*\(/,
  },
  // A start time or a deadline taken from the wall clock: only a measured
  // duration or a time-bounded loop needs one.
  {
    rule: 'wall-clock stamp',
    pattern:
      /\b(?:const|let)\s+\w+\s*=\s*(?:Date\.now|performance\.now|process\.hrtime(?:\.bigint)?)\s*\(\s*\)\s*(?:[;,+\n]|$)/,
  },
];

/**
 * The source with comments and string literals blanked (their line breaks
 * kept, so line numbers hold): a comment naming a sleep is none, and a string
 * here is a child's script, a shell stub or an example, whose timers are no
 * wait of the test's. Module names stay, for the import rule.
 */
export function codeOnly(source: string): string {
  let out = '';
  let i = 0;
  const blank = (text: string) => text.replace(/[^\n]/g, ' ');
  while (i < source.length) {
    const two = source.slice(i, i + 2);
    const char = source[i] ?? '';
    let end: number;
    if (two === '//') {
      end = source.indexOf('\n', i);
      if (end === -1) end = source.length;
    } else if (two === '/*') {
      end = source.indexOf('*/', i + 2);
      end = end === -1 ? source.length : end + 2;
    } else if (char === '`' || char === "'" || char === '"') {
      end = i + 1;
      while (end < source.length && source[end] !== char) {
        if (source[end] === '\\') end += 1;
        if (char !== '`' && source[end] === '\n') break;
        end += 1;
      }
      end += 1;
      if (char !== '`' && /(?:\bfrom|\bimport\s*\()\s*$/.test(out)) {
        out += source.slice(i, end);
        i = end;
        continue;
      }
    } else {
      out += char;
      i += 1;
      continue;
    }
    out += blank(source.slice(i, end));
    i = end;
  }
  return out;
}

/** What `source` (the file `file`) does against the rule, one finding per line and rule. */
export function realWaitsIn(file: string, source: string): RealWait[] {
  const found: RealWait[] = [];
  codeOnly(source)
    .split('\n')
    .forEach((text, index) => {
      for (const { rule, pattern } of rules) {
        if (pattern.test(text)) found.push({ file, line: index + 1, rule });
      }
    });
  return found;
}

/** A glob of vitest's `include` as a regular expression over workspace-relative paths. */
function globPattern(glob: string): RegExp {
  const body = glob
    .split('**/')
    .map((part) => part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  return new RegExp(`^${body}$`);
}

/** The unit test files under `root` that `include` (vitest.config.ts's globs) names. */
export async function unitTestFiles(root: string, include: readonly string[]): Promise<string[]> {
  const patterns = include.map(globPattern);
  const tops = [...new Set(include.map((glob) => glob.split('/')[0] ?? ''))];
  const files: string[] = [];
  for (const top of tops) {
    for (const file of await typescriptSources(path.join(root, top)).catch(() => [])) {
      const relative = path.relative(root, file);
      if (patterns.some((pattern) => pattern.test(relative))) files.push(relative);
    }
  }
  return files.sort();
}

/** Every finding in the unit test files under `root`. */
export async function findRealWaits(root: string, include: readonly string[]): Promise<RealWait[]> {
  const found: RealWait[] = [];
  for (const file of await unitTestFiles(root, include)) {
    found.push(...realWaitsIn(file, await readFile(path.join(root, file), 'utf8')));
  }
  return found;
}
