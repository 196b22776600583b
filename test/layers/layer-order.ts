/**
 * The package order of docs/architecture.md, checked against the code: a
 * package imports only packages on lower rows of the documented order (and
 * names each in its package.json). The order is read from the document
 * itself, so the page and the check cannot drift apart.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { typescriptSources } from '../support/source-files.js';

/** One import against the order, or of a package the document does not place. */
export interface LayerViolation {
  file: string;
  from: string;
  to: string;
  why: string;
}

/**
 * The imports against the order the design allows: the dispatcher loads each
 * role's entry, through the bundle that holds the role (services/cli/src/bundles).
 */
const allowed = [
  { file: 'services/cli/src/bundles/cold.ts', to: 'supervisor' },
  { file: 'services/cli/src/bundles/nspawn-lifecycle.ts', to: 'nspawn-lifecycle' },
];

const scope = '@aks-flex-node/';

/** The rows of the fenced block under "## Package order", lowest first. */
export function parseDocumentedOrder(markdown: string): string[][] {
  const section = markdown.split(/^## Package order$/m)[1];
  const block = section === undefined ? undefined : /```text\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md has no "## Package order" block');
  return block
    .split('\n')
    .map((line) => line.split('→')[0] ?? '')
    .filter((line) => line.trim() !== '')
    .map((line) => line.split(',').map((name) => name.trim()));
}

interface WorkspacePackage {
  name: string;
  dir: string;
  dependencies: string[];
}

/** The workspace's package directories, relative to `root`. */
export async function listPackageDirs(root: string): Promise<string[]> {
  const dirs = ['systemd'];
  for (const parent of ['shared', 'services']) {
    for (const entry of await readdir(path.join(root, parent), { withFileTypes: true })) {
      if (entry.isDirectory()) dirs.push(path.join(parent, entry.name));
    }
  }
  return dirs;
}

async function listPackages(root: string): Promise<WorkspacePackage[]> {
  const packages: WorkspacePackage[] = [];
  for (const dir of await listPackageDirs(root)) {
    const manifest = JSON.parse(await readFile(path.join(root, dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
    };
    packages.push({
      name: manifest.name.slice(scope.length),
      dir,
      dependencies: Object.keys(manifest.dependencies ?? {})
        .filter((dep) => dep.startsWith(scope))
        .map((dep) => dep.slice(scope.length)),
    });
  }
  return packages;
}

/** The workspace packages a source file imports (static, type-only and dynamic imports alike). */
export function importedPackages(source: string): string[] {
  const pattern = /(?:from|import)\s*\(?\s*['"]@aks-flex-node\/([\w-]+)['"]/g;
  return [...source.matchAll(pattern)].map((match) => match[1] ?? '');
}

/** Every import in the workspace under `root` that goes against the documented order. */
export async function findLayerViolations(root: string): Promise<LayerViolation[]> {
  const rows = parseDocumentedOrder(
    await readFile(path.join(root, 'docs/architecture.md'), 'utf8'),
  );
  const rowOf = new Map(rows.flatMap((names, row) => names.map((name) => [name, row] as const)));
  const violations: LayerViolation[] = [];
  for (const pkg of await listPackages(root)) {
    const own = rowOf.get(pkg.name);
    if (own === undefined) {
      violations.push({ file: pkg.dir, from: pkg.name, to: pkg.name, why: 'not in the order' });
      continue;
    }
    for (const file of await typescriptSources(path.join(root, pkg.dir))) {
      const relative = path.relative(root, file);
      for (const to of importedPackages(await readFile(file, 'utf8'))) {
        if (to === pkg.name) continue;
        const why = judgeImport(pkg, to, own, rowOf.get(to), relative);
        if (why !== undefined) violations.push({ file: relative, from: pkg.name, to, why });
      }
    }
  }
  return violations;
}

function judgeImport(
  pkg: WorkspacePackage,
  to: string,
  own: number,
  target: number | undefined,
  file: string,
): string | undefined {
  if (target === undefined) return 'imports a package the order does not place';
  if (!pkg.dependencies.includes(to)) return 'imports a package its package.json does not name';
  if (target < own) return undefined;
  if (allowed.some((rule) => rule.file === file && rule.to === to)) return undefined;
  return target === own ? 'imports a package on its own row' : 'imports a higher package';
}
