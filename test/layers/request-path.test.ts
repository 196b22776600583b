import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { typescriptSources } from '../support/source-files.js';
import {
  callbacksOf,
  filesReachedFrom,
  importGraph,
  importsOf,
  interfaceMembers,
  notTheRequests,
  requestFiles,
} from './request-path.js';

const workspace = path.resolve(import.meta.dirname, '../..');
const route = 'services/supervisor/src/routes/agent-upgrades.ts';
const theSwitch = 'shared/agentbinary/src/upgrade/stage-and-switch.ts';

/**
 * Issue 25's goal: 8 files (23 when it was filed). The path may only shrink
 * from here; a file that joins it has to replace one.
 */
const maxFiles = 8;
const maxCallbacks = 2;

/** The numbered files of docs/architecture.md's "Follow a request" section, in order. */
async function documentedPath(): Promise<string[]> {
  const doc = await readFile(path.join(workspace, 'docs/architecture.md'), 'utf8');
  const section = doc.split(/^## Follow a request.*$/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/^\d+\. `([^`]+\.ts)`/gm)].map((match) => match[1] ?? '');
}

describe('the AgentUpgrade request path (issue 25)', () => {
  it(`runs at most ${maxFiles} files from the route up to the switch, the ones docs/architecture.md lists`, async () => {
    const graph = await importGraph(workspace);
    const reached = filesReachedFrom(graph, path.join(workspace, route)).map((file) =>
      path.relative(workspace, file),
    );
    const runs = requestFiles(reached);
    expect(runs[0]).toBe(route);
    expect(runs).toContain(theSwitch);
    // Nothing that runs after the switch is reached from the route.
    for (const after of [
      'services/supervisor/src/upgrade/upgrade-service.ts',
      'services/supervisor/src/upgrade/restart-executor.ts',
      'services/supervisor/src/upgrade/machine-copy-keeper.ts',
      'services/supervisor/src/upgrade/start-limit.ts',
      'shared/agentbinary/src/upgrade/judge-started-upgrade.ts',
    ])
      expect(runs).not.toContain(after);
    expect(runs.length).toBeLessThanOrEqual(maxFiles);
    expect([...(await documentedPath())].sort()).toEqual([...runs].sort());
  });

  it('leaves out only route plumbing every route uses, and files that exist', async () => {
    const routes = path.join(workspace, 'services/supervisor/src/routes');
    for (const file of await typescriptSources(routes)) {
      const source = await readFile(file, 'utf8');
      if (file.endsWith('.test.ts') || !source.includes('.route({')) continue;
      for (const plumbing of notTheRequests.plumbing)
        expect(source, file).toContain(`./${path.basename(plumbing, '.ts')}.js`);
    }
    for (const file of [...notTheRequests.plumbing, ...notTheRequests.libraries])
      await expect(readFile(path.join(workspace, file), 'utf8')).resolves.toBeTruthy();
  });

  it(`stageAndSwitch takes at most ${maxCallbacks} callbacks`, async () => {
    const sources = [path.join(workspace, theSwitch)];
    for (const dir of ['shared', 'services']) {
      for (const file of await typescriptSources(path.join(workspace, dir))) {
        if (!file.endsWith('.test.ts') && file !== sources[0]) sources.push(file);
      }
    }
    const texts = await Promise.all(sources.map((file) => readFile(file, 'utf8')));
    const callbacks = callbacksOf(texts, 'StageOptions');
    expect(callbacks).toEqual(['port.fetch', 'port.report']);
    expect(callbacks?.length).toBeLessThanOrEqual(maxCallbacks);
  });
});

describe('how the path and the callbacks are counted', () => {
  it('a file the route reaches is counted, a library or another package is not', () => {
    const graph = new Map([
      ['route', ['requests', 'plumbing']],
      ['requests', ['switch', 'library']],
      ['switch', ['switch-part']],
      ['after', ['switch']],
    ]);
    expect(filesReachedFrom(graph, 'route')).toEqual([
      'route',
      'requests',
      'plumbing',
      'switch',
      'library',
      'switch-part',
    ]);
    expect(
      requestFiles([
        'services/supervisor/src/routes/agent-upgrades.ts',
        'services/supervisor/src/routes/zod-type-provider.ts',
        'shared/agentbinary/src/upgrade/upgrade-state.ts',
        'shared/agentbinary/src/host.ts',
        'shared/fs/src/sync-directory.ts',
      ]),
    ).toEqual([
      'services/supervisor/src/routes/agent-upgrades.ts',
      'shared/agentbinary/src/upgrade/upgrade-state.ts',
    ]);
  });

  it('reads the names an import brings, type-only and re-exports included', () => {
    const source = [
      "import { a, type B, c as d } from '@aks-flex-node/x';",
      "import type { E } from './e.js';",
      "export { f } from '../f.js';",
      "import * as g from '@aks-flex-node/g';",
      "const h = await import('./h.js');",
    ].join('\n');
    expect(importsOf(source)).toEqual([
      { specifier: '@aks-flex-node/x', names: ['a', 'B', 'c'] },
      { specifier: './e.js', names: ['E'] },
      { specifier: '../f.js', names: ['f'] },
      { specifier: '@aks-flex-node/g', names: ['*'] },
      { specifier: './h.js', names: ['*'] },
    ]);
  });

  it('counts function members, methods and those of a port or inline object, not data or the capabilities', () => {
    const source = `
      export interface Options {
        paths: Paths;
        /** A comment; with a semicolon. */
        log: Logger;
        clock: Pick<Host, 'wallClock'>;
        signal?: AbortSignal | undefined;
        verify: (staged: string) => Promise<Info>;
        port: Port;
        events: { onProgress(progress: number): void; total: number };
      }
      interface Port {
        fetch(target: string): Promise<void>;
        report: (phase: string) => void;
      }
      interface Paths { readonly root: string; }
    `;
    expect(interfaceMembers(source, 'Port')?.map((member) => member.name)).toEqual([
      'fetch',
      'report',
    ]);
    expect(callbacksOf([source], 'Options')).toEqual([
      'verify',
      'port.fetch',
      'port.report',
      'events.onProgress',
    ]);
  });
});
