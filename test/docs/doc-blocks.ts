import { readFile } from 'node:fs/promises';
import path from 'node:path';

// The fenced blocks of the operator docs, each with the marking before it:
// `<!-- run: ID -->` (test/e2e/docs-run.test.ts runs it, as the step of
// test/e2e/docs-run-plan.ts named ID) or `<!-- illustration: why -->` (not
// run, and the reason says why). An HTML comment renders as nothing on
// GitHub, so the marking costs a reader nothing. The unit test
// (doc-blocks.test.ts) fails on a block with neither; the e2e test reads the
// blocks from here at run time, so what it runs is what the page says.

/** The pages whose every block runs or says why not, in the order an operator reads them. */
export const runnableDocs = [
  'README.md',
  'docs/usage/getting-started.md',
  'docs/usage/operations.md',
  'docs/usage/migration.md',
  'docs/usage/azure-container-linux.md',
] as const;

export type DocMarking =
  | { readonly kind: 'run'; readonly id: string }
  | { readonly kind: 'illustration'; readonly why: string }
  | { readonly kind: 'none' };

/** One fenced block of a page. */
export interface DocBlock {
  /** The page, relative to the repository. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string (`sh`, or empty). */
  readonly info: string;
  /** The block's lines, the fence's indentation removed, ending in a newline. */
  readonly text: string;
  readonly marking: DocMarking;
}

const markingPattern = /^<!--\s*(run|illustration):\s*(.*?)\s*-->$/;

/** The fenced blocks of one page's text, with their markings. */
export function parseDocBlocks(file: string, source: string): DocBlock[] {
  const lines = source.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i] ?? '');
    if (open === null) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const body: string[] = [];
    let end = i + 1;
    while (end < lines.length && !(lines[end] ?? '').trimStart().startsWith(fence)) {
      body.push((lines[end] ?? '').slice(indent.length));
      end += 1;
    }
    if (end >= lines.length) throw new Error(`${file}:${i + 1}: a fence that never closes`);
    blocks.push({
      file,
      line: i + 1,
      info: info.trim(),
      text: `${body.join('\n')}\n`,
      marking: markingBefore(lines, i),
    });
    i = end;
  }
  return blocks;
}

/** The marking on the last non-blank line before the fence at `at`. */
function markingBefore(lines: readonly string[], at: number): DocMarking {
  let i = at - 1;
  while (i >= 0 && (lines[i] ?? '').trim() === '') i -= 1;
  const found = markingPattern.exec((lines[i] ?? '').trim());
  if (found === null) return { kind: 'none' };
  const [, kind, value = ''] = found;
  return kind === 'run' ? { kind: 'run', id: value } : { kind: 'illustration', why: value };
}

/** Every block of every runnable page, pages in {@link runnableDocs} order. */
export async function readDocBlocks(repoRoot: string): Promise<DocBlock[]> {
  const all: DocBlock[] = [];
  for (const file of runnableDocs) {
    all.push(...parseDocBlocks(file, await readFile(path.join(repoRoot, file), 'utf8')));
  }
  return all;
}
