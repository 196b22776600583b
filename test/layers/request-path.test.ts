import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { typescriptSources } from '../support/source-files.js';
import {
  callbacksOf,
  filesBetween,
  importGraph,
  importsOf,
  interfaceMembers,
} from './request-path.js';

const workspace = path.resolve(import.meta.dirname, '../..');
const route = 'services/supervisor/src/routes/agent-upgrades.ts';
const theSwitch = 'shared/agentbinary/src/upgrade/stage-and-switch.ts';

/** The goal of issue 25: a path a reader follows in one sitting, and a switch that calls back little. */
const maxFiles = 8;
const maxCallbacks = 2;

/** The numbered files of docs/architecture.md's "Follow a request" section, in order. */
async function documentedPath(): Promise<string[]> {
  const doc = await readFile(path.join(workspace, 'docs/architecture.md'), 'utf8');
  const section = doc.split(/^## Follow a request.*$/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/^\d+\. `([^`]+\.ts)`/gm)].map((match) => match[1] ?? '');
}

describe('the AgentUpgrade request path (issue 25)', () => {
  it(`crosses at most ${maxFiles} files from the route to the switch, the ones docs/architecture.md lists`, async () => {
    const graph = await importGraph(workspace);
    const crossed = filesBetween(
      graph,
      path.join(workspace, route),
      path.join(workspace, theSwitch),
    ).map((file) => path.relative(workspace, file));
    expect(crossed[0]).toBe(route);
    expect(crossed.at(-1)).toBe(theSwitch);
    expect(crossed.length).toBeLessThanOrEqual(maxFiles);
    expect(await documentedPath()).toEqual(crossed);
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
  it('a file on a side branch is not crossed; a package index is passed through to the defining file', () => {
    const graph = new Map([
      ['route', ['deps', 'side']],
      ['deps', ['service']],
      ['service', ['switch', 'guard']],
      ['side', []],
      ['guard', []],
      ['switch', ['after']],
    ]);
    expect(filesBetween(graph, 'route', 'switch')).toEqual(['route', 'deps', 'service', 'switch']);
    // One more hop on the way is one more file crossed.
    graph.set('service', ['adapter', 'guard']);
    graph.set('adapter', ['switch']);
    expect(filesBetween(graph, 'route', 'switch')).toHaveLength(5);
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
