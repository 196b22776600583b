/**
 * Import cycles inside a package: a file that, through the files it imports,
 * comes back to itself. Such a ring has no bottom to read from and no order
 * in which its modules can be evaluated; with ESM, one of them sees the
 * others' bindings before they are initialised. Packages are acyclic among
 * themselves (layer-order.ts); this keeps each package acyclic inside.
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { typescriptSources } from '../support/source-files.js';
import { listPackageDirs } from './layer-order.js';

/** One cycle: the files (relative to the workspace) in import order, the first repeated at the end. */
export type ImportCycle = string[];

/**
 * The files a source imports by relative path: static and dynamic imports
 * and re-exports. Type-only imports and exports are left out: they are
 * erased when compiled, so they put no module before another.
 */
export function relativeImports(source: string): string[] {
  const statics =
    /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/gm;
  const dynamics = /\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  return [...source.matchAll(statics), ...source.matchAll(dynamics)].map((match) => match[1] ?? '');
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The TypeScript file an import names (`./x.js` is `./x.ts`), or undefined for anything else. */
async function resolveImport(from: string, specifier: string): Promise<string | undefined> {
  const target = path.resolve(path.dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`]) {
    if (candidate.endsWith('.ts') && (await exists(candidate))) return candidate;
  }
  return undefined;
}

/** Every import cycle among the non-test sources of each package under `root`. */
export async function findImportCycles(root: string): Promise<ImportCycle[]> {
  const cycles: ImportCycle[] = [];
  for (const dir of await listPackageDirs(root)) {
    const files = (await typescriptSources(path.join(root, dir))).filter(
      (file) => !file.endsWith('.test.ts'),
    );
    const graph = new Map<string, string[]>();
    for (const file of files) {
      const targets: string[] = [];
      for (const specifier of relativeImports(await readFile(file, 'utf8'))) {
        const target = await resolveImport(file, specifier);
        if (target !== undefined) targets.push(target);
      }
      graph.set(file, targets);
    }
    for (const cycle of cyclesIn(graph))
      cycles.push(cycle.map((file) => path.relative(root, file)));
  }
  return cycles;
}

/**
 * One cycle for each ring of files that reach one another (a strongly
 * connected component, by Tarjan's algorithm), as a path through it from its
 * first file in sorted order: enough to name what to break.
 */
export function cyclesIn(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    const selfImport = graph.get(node)?.includes(node) === true;
    if (component.length > 1 || selfImport) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => pathThrough(graph, new Set(component)));
}

/** A path from the component's first file back to itself, staying inside the component. */
function pathThrough(
  graph: ReadonlyMap<string, readonly string[]>,
  members: Set<string>,
): string[] {
  const [start] = [...members];
  if (start === undefined) return [];
  // Breadth-first from start's imports, so the cycle shown is a shortest one.
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node: string = queue.shift() ?? start;
    for (const next of graph.get(node) ?? ([] as readonly string[])) {
      if (!members.has(next) || cameFrom.has(next)) continue;
      cameFrom.set(next, node);
      if (next === start) {
        const cycle = [start];
        for (let at = node; at !== start; at = cameFrom.get(at) ?? start) cycle.unshift(at);
        cycle.unshift(start);
        return cycle;
      }
      queue.push(next);
    }
  }
  return [start, start];
}
