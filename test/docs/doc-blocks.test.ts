import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reinstallCommand } from '@aks-flex-node/layout';
import { docSteps } from '../e2e/docs-run-plan.js';
import { parseDocBlocks, readDocBlocks, runnableDocs } from './doc-blocks.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

describe('the operator docs: every command block runs in test/e2e/docs-run.test.ts or says why not', () => {
  it('the pages checked are README.md and every page of docs/usage', async () => {
    const usage = (await readdir(path.join(repoRoot, 'docs/usage')))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/usage/${name}`);
    expect([...runnableDocs].sort()).toEqual(['README.md', ...usage].sort());
  });

  it('every block is marked `<!-- run: ID -->` or `<!-- illustration: why -->`, with a reason', async () => {
    const unmarked = (await readDocBlocks(repoRoot))
      .filter(
        (block) =>
          block.marking.kind === 'none' ||
          (block.marking.kind === 'illustration' && block.marking.why === ''),
      )
      .map((block) => `${block.file}:${block.line}`);
    expect(unmarked, 'mark these blocks (see test/docs/doc-blocks.ts)').toEqual([]);
  });

  it('the run blocks and the e2e plan name the same steps, each once', async () => {
    const blocks = await readDocBlocks(repoRoot);
    const runIds = blocks.flatMap((b) => (b.marking.kind === 'run' ? [b.marking.id] : []));
    const planIds = docSteps.map((step) => step.id);
    expect(new Set(runIds).size, 'a run ID used twice').toBe(runIds.length);
    expect([...runIds].sort()).toEqual([...planIds].sort());
  });

  it('the reinstall command in operations.md is the one the recovery unit and status print', async () => {
    const block = (await readDocBlocks(repoRoot)).find(
      (b) => b.marking.kind === 'run' && b.marking.id === 'reinstall',
    );
    expect(block?.text.trim()).toBe(reinstallCommand('amd64'));
  });

  it('the parser finds indented fences, and a marking only on the line before a fence', () => {
    const page = [
      '<!-- run: a -->',
      '```sh',
      'echo a',
      '```',
      '',
      '- item',
      '',
      '  <!-- illustration: output -->',
      '  ```',
      '  waiting',
      '  ```',
      '<!-- run: b -->',
      'text between',
      '```',
      'echo c',
      '```',
    ].join('\n');
    expect(parseDocBlocks('p.md', page)).toEqual([
      { file: 'p.md', line: 2, info: 'sh', text: 'echo a\n', marking: { kind: 'run', id: 'a' } },
      {
        file: 'p.md',
        line: 9,
        info: '',
        text: 'waiting\n',
        marking: { kind: 'illustration', why: 'output' },
      },
      { file: 'p.md', line: 14, info: '', text: 'echo c\n', marking: { kind: 'none' } },
    ]);
  });
});
