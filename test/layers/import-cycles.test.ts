import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cyclesIn, findImportCycles, relativeImports } from './import-cycles.js';

const workspace = path.resolve(import.meta.dirname, '../..');

/**
 * A small workspace of its own: the package folders the real one has
 * (systemd, shared/fs, shared/log, shared/lock, services/cli), with `files`
 * written in. Far cheaper than a copy of the real one.
 */
async function workspaceWith(files: Record<string, string>): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'import-cycles-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  for (const dir of [
    'systemd',
    'shared/fs/src',
    'shared/log/src',
    'shared/lock/src',
    'services/cli/src',
  ]) {
    await mkdir(path.join(tmp, dir), { recursive: true });
  }
  for (const [file, source] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(tmp, file)), { recursive: true });
    await writeFile(path.join(tmp, file), source);
  }
  return tmp;
}

describe('import cycles inside a package', () => {
  it('no package in the workspace has one', async () => {
    expect(await findImportCycles(workspace)).toEqual([]);
  });

  it.each([
    [
      'two files importing each other',
      {
        'shared/fs/src/ring-a.ts': "import { b } from './ring-b.js';\nexport const a = b;\n",
        'shared/fs/src/ring-b.ts': "import { a } from './ring-a.js';\nexport const b = a;\n",
      },
      ['shared/fs/src/ring-a.ts', 'shared/fs/src/ring-b.ts', 'shared/fs/src/ring-a.ts'],
    ],
    [
      'a ring closed by a dynamic import, across folders (the CLI bundle ring issue 25 found)',
      {
        'services/cli/src/bundles/ring.ts':
          "import { run } from '../commands/ring.js';\nexport const r = run;\n",
        'services/cli/src/commands/ring.ts':
          "export const run = () => import('../bundles/ring.js');\n",
      },
      [
        'services/cli/src/bundles/ring.ts',
        'services/cli/src/commands/ring.ts',
        'services/cli/src/bundles/ring.ts',
      ],
    ],
    [
      'a ring of type-only imports',
      {
        'shared/lock/src/ring-a.ts':
          "import type { B } from './ring-b.js';\nexport type A = B[];\n",
        'shared/lock/src/ring-b.ts': "export type { A as B } from './ring-a.js';\n",
      },
      ['shared/lock/src/ring-a.ts', 'shared/lock/src/ring-b.ts', 'shared/lock/src/ring-a.ts'],
    ],
  ])('fails on %s', async (_name, files, cycle) => {
    const copy = await workspaceWith(files);
    expect(await findImportCycles(copy)).toEqual([cycle]);
    // The same files with the ring's closing import gone: no cycle.
    const [last] = Object.keys(files).slice(-1);
    const broken = await workspaceWith({ ...files, [last ?? '']: 'export const run = 1;\n' });
    expect(await findImportCycles(broken)).toEqual([]);
  });

  it('imports between packages by name belong to the layer test, no cycle here', async () => {
    const copy = await workspaceWith({
      'shared/fs/src/ring-a.ts': "import { b } from '@aks-flex-node/log';\nexport const a = b;\n",
      'shared/log/src/ring-a.ts': "import { a } from '@aks-flex-node/fs';\nexport const b = a;\n",
    });
    expect(await findImportCycles(copy)).toEqual([]);
  });

  it('reads static, re-export, side-effect, type-only and dynamic imports, and only relative ones', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "export type { D } from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "import { g } from '@aks-flex-node/log';",
      "import path from 'node:path';",
    ].join('\n');
    expect(relativeImports(source).sort()).toEqual(
      ['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js'].sort(),
    );
  });

  it('names one shortest path through each ring, and a file importing itself', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c', 'a']],
      ['c', ['a']],
      ['d', ['d']],
      ['e', ['a']],
    ]);
    expect(cyclesIn(graph)).toEqual([
      ['a', 'b', 'a'],
      ['d', 'd'],
    ]);
  });
});
