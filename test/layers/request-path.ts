/**
 * The files whose code an AgentUpgrade request runs in the daemon, from the
 * route up to and including the switch, and the callbacks the switch takes
 * (issue 25): counted from the code, so docs/architecture.md's "Follow a
 * request" list cannot drift and the path cannot quietly grow again.
 *
 * The request runs a file when the route module reaches it by static imports.
 * Every import counts: value, type-only (the route reaches the requests
 * through their type) and re-export. An import of a workspace package by name
 * counts the file that defines the imported name; the package's index, which
 * only re-exports, holds none of the request's code and is not counted.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { typescriptSources } from '../support/source-files.js';
import { listPackageDirs } from './layer-order.js';

const scope = '@aks-flex-node/';

/** One import: the module named, and the names it brings (`*` for a namespace or side-effect import). */
interface ImportedNames {
  specifier: string;
  names: string[];
}

/** The imports and re-exports of a source, with the names each brings. */
export function importsOf(source: string): ImportedNames[] {
  const statics = /^\s*(?:import|export)\s+(?:type\s+)?(?:([^'";]*?)\sfrom\s*)?['"]([^'"]+)['"]/gm;
  const found: ImportedNames[] = [];
  for (const [, clause = '', specifier = ''] of source.matchAll(statics)) {
    const braces = /\{([^}]*)\}/.exec(clause)?.[1];
    const names =
      braces === undefined
        ? ['*']
        : braces
            .split(',')
            .map((part) => part.trim().replace(/^type\s+/, ''))
            .filter((part) => part !== '')
            .map((part) => part.split(/\s+as\s+/)[0]?.trim() ?? part);
    found.push({ specifier, names });
  }
  for (const [, specifier = ''] of source.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push({ specifier, names: ['*'] });
  }
  return found;
}

/** The name each of a package index's re-exports gives, and the file that defines it. */
function reexportsOf(index: string, source: string): Map<string, string> {
  const names = new Map<string, string>();
  const reexport = /^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const [, list = '', specifier = ''] of source.matchAll(reexport)) {
    const file = path.resolve(path.dirname(index), specifier).replace(/\.js$/, '.ts');
    for (const part of list.split(',')) {
      const entry = part.trim().replace(/^type\s+/, '');
      if (entry === '') continue;
      const [name = '', alias] = entry.split(/\s+as\s+/);
      names.set((alias ?? name).trim(), file);
    }
  }
  return names;
}

/** The import graph of the workspace's non-test sources, by absolute path. */
export async function importGraph(root: string): Promise<Map<string, string[]>> {
  const indexes = new Map<string, { index: string; names: Map<string, string> }>();
  for (const dir of await listPackageDirs(root)) {
    const manifest = path.join(root, dir, 'package.json');
    const index = path.join(root, dir, 'src/index.ts');
    if (!existsSync(manifest) || !existsSync(index)) continue;
    const { name } = JSON.parse(await readFile(manifest, 'utf8')) as { name: string };
    indexes.set(name, { index, names: reexportsOf(index, await readFile(index, 'utf8')) });
  }
  const graph = new Map<string, string[]>();
  for (const dir of await listPackageDirs(root)) {
    for (const file of await typescriptSources(path.join(root, dir))) {
      if (file.endsWith('.test.ts')) continue;
      const targets = new Set<string>();
      for (const { specifier, names } of importsOf(await readFile(file, 'utf8'))) {
        if (specifier.startsWith('.')) {
          const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
          if (existsSync(target)) targets.add(target);
        } else if (specifier.startsWith(scope)) {
          const pkg = indexes.get(specifier);
          if (pkg === undefined) continue;
          // A name the index does not re-export (or a namespace import) is the index's own.
          for (const name of names) targets.add(pkg.names.get(name) ?? pkg.index);
        }
      }
      graph.set(file, [...targets]);
    }
  }
  return graph;
}

/** The files `from` reaches by imports, itself included, in the order a breadth-first walk meets them. */
export function filesReachedFrom(
  graph: ReadonlyMap<string, readonly string[]>,
  from: string,
): string[] {
  const reached = [from];
  for (let i = 0; i < reached.length; i++) {
    for (const next of graph.get(reached[i] ?? from) ?? [])
      if (!reached.includes(next)) reached.push(next);
  }
  return reached;
}

/**
 * What the count leaves out, by workspace-relative path: route plumbing every
 * route uses, and the general files of shared/agentbinary (its layout of
 * slots and links, and the host object), which every role that touches the
 * install runs alike. Every other package the request reaches (log, layout,
 * fs, failpoints, api, hostroot, lock, archive, systemd) is a general library
 * and is not counted either; services/supervisor and the rest of
 * shared/agentbinary are the request's own code.
 */
export const notTheRequests = {
  plumbing: ['services/supervisor/src/routes/zod-type-provider.ts'],
  libraries: [
    'shared/agentbinary/src/agent-binary-paths.ts',
    'shared/agentbinary/src/agent-link.ts',
    'shared/agentbinary/src/ensure-layout.ts',
    'shared/agentbinary/src/host.ts',
    'shared/agentbinary/src/resolve-link.ts',
  ],
};

/** The packages whose files are the request's own code, unless {@link notTheRequests} names them. */
const requestPackages = ['services/supervisor/', 'shared/agentbinary/'];

/**
 * The files whose code a request runs: those the route reaches (relative
 * paths, `reached`) in the request's packages, less plumbing and libraries.
 */
export function requestFiles(reached: readonly string[]): string[] {
  const left = new Set([...notTheRequests.plumbing, ...notTheRequests.libraries]);
  return reached.filter(
    (file) => requestPackages.some((dir) => file.startsWith(dir)) && !left.has(file),
  );
}

/** One member of an interface: its name and its type as written (a method's is its signature). */
interface Member {
  name: string;
  type: string;
  method: boolean;
}

/** The members of `interface Name { … }` in a source, comments dropped. */
export function interfaceMembers(source: string, name: string): Member[] | undefined {
  const start = new RegExp(`^\\s*(?:export\\s+)?interface\\s+${name}\\b[^{]*\\{`, 'm').exec(source);
  if (start === null) return undefined;
  let depth = 1;
  let end = start.index + start[0].length;
  for (; depth > 0 && end < source.length; end++) {
    if (source[end] === '{') depth++;
    if (source[end] === '}') depth--;
  }
  const body = source
    .slice(start.index + start[0].length, end - 1)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const members: Member[] = [];
  // Top-level members end with `;` at depth 0.
  let depthNow = 0;
  let text = '';
  for (let at = 0; at < body.length; at++) {
    const char = body.charAt(at);
    if ('{(<['.includes(char)) depthNow++;
    // The `>` of an arrow closes nothing.
    if ('})>]'.includes(char) && !(char === '>' && body[at - 1] === '=')) depthNow--;
    if (char === ';' && depthNow === 0) {
      const member = /^\s*(?:readonly\s+)?(\w+)\??\s*(\(|:)([\s\S]*)$/.exec(text);
      if (member !== null) {
        members.push({
          name: member[1] ?? '',
          method: member[2] === '(',
          type: (member[3] ?? '').trim(),
        });
      }
      text = '';
    } else {
      text += char;
    }
  }
  return members;
}

/**
 * The capabilities every operation is given alike, whose methods run nothing
 * of the caller's: they are not callbacks.
 */
const capabilities = /^(?:Logger|AbortSignal|Pick<Host,[^>]*>)(?:\s*\|\s*undefined)?$/;

/**
 * The callbacks an options interface takes: its function-valued members, and
 * those of any interface or object type it holds (a port), found by name in
 * `sources`. Named as `member` or `port.member`.
 */
export function callbacksOf(
  sources: readonly string[],
  name: string,
  prefix = '',
): string[] | undefined {
  const members = sources
    .map((source) => interfaceMembers(source, name))
    .find((found) => found !== undefined);
  if (members === undefined) return undefined;
  const callbacks: string[] = [];
  for (const member of members) {
    const named = `${prefix}${member.name}`;
    if (member.method || /=>/.test(member.type)) {
      callbacks.push(named);
      continue;
    }
    if (capabilities.test(member.type)) continue;
    const inline = /^\{([\s\S]*)\}$/.exec(member.type)?.[1];
    if (inline !== undefined) {
      const nested = callbacksOf([`interface Inline {${inline}}`], 'Inline', `${named}.`);
      callbacks.push(...(nested ?? []));
      continue;
    }
    const typeName = /^(\w+)(?:\s*\|\s*undefined)?$/.exec(member.type)?.[1];
    if (typeName !== undefined)
      callbacks.push(...(callbacksOf(sources, typeName, `${named}.`) ?? []));
  }
  return callbacks;
}
