import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { findLayerViolations, importedPackages } from './layer-order.js';

const workspace = path.resolve(import.meta.dirname, '../..');

/** A copy of the workspace's packages and docs (no node_modules), to add a wrong-way import to. */
async function copyWorkspace(): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'layer-order-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  for (const dir of ['docs', 'shared', 'services', 'systemd']) {
    await cp(path.join(workspace, dir), path.join(tmp, dir), {
      recursive: true,
      filter: (source) => !source.split(path.sep).includes('node_modules'),
    });
  }
  return tmp;
}

describe('the package order', () => {
  it('every import in the workspace follows docs/architecture.md', async () => {
    expect(await findLayerViolations(workspace)).toEqual([]);
  });

  it.each([
    [
      'a lower package importing a higher one',
      'shared/fs/src/wrong-way.ts',
      "import { hostRootState } from '@aks-flex-node/hostroot';\n",
      { from: 'fs', to: 'hostroot', why: 'imports a package its package.json does not name' },
    ],
    [
      'a CLI command importing the supervisor instead of going through the dispatcher',
      'services/cli/src/commands/wrong-way.ts',
      "import type { SupervisorOptions } from '@aks-flex-node/supervisor';\n",
      { from: 'cli', to: 'supervisor', why: 'imports a package on its own row' },
    ],
    [
      'a shared package reaching into a service by a dynamic import',
      'shared/agentbinary/src/wrong-way.ts',
      "export const load = () => import('@aks-flex-node/supervisor');\n",
      {
        from: 'agentbinary',
        to: 'supervisor',
        why: 'imports a package its package.json does not name',
      },
    ],
  ])('fails on %s', async (_name, file, source, expected) => {
    const copy = await copyWorkspace();
    await writeFile(path.join(copy, file), source);
    expect(await findLayerViolations(copy)).toEqual([{ file, ...expected }]);
  });

  it('fails on a declared dependency that points up the order', async () => {
    const copy = await copyWorkspace();
    const manifest = path.join(copy, 'shared/lock/package.json');
    const parsed = JSON.parse(await readFile(manifest, 'utf8')) as {
      dependencies: Record<string, string>;
    };
    parsed.dependencies['@aks-flex-node/agentbinary'] = 'workspace:*';
    await writeFile(manifest, JSON.stringify(parsed));
    await writeFile(
      path.join(copy, 'shared/lock/src/wrong-way.ts'),
      "import { agentBinaryPathsUnder } from '@aks-flex-node/agentbinary';\n",
    );
    expect(await findLayerViolations(copy)).toEqual([
      {
        file: 'shared/lock/src/wrong-way.ts',
        from: 'lock',
        to: 'agentbinary',
        why: 'imports a higher package',
      },
    ]);
  });

  it('reads static, type-only and dynamic imports alike', () => {
    const source = [
      "import { a } from '@aks-flex-node/log';",
      "import type { B } from '@aks-flex-node/api';",
      "const c = await import('@aks-flex-node/supervisor');",
      "export { d } from '@aks-flex-node/fs';",
    ].join('\n');
    expect(importedPackages(source)).toEqual(['log', 'api', 'supervisor', 'fs']);
  });
});
