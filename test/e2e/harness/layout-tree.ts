import type { Host } from './host.js';
import { layoutRoots, productPaths, unitGlob } from './product-names.js';

/**
 * One `find` over every place the product writes. Each entry prints as
 * path, mode, size and link target; absent roots are named so that "not
 * created" and "empty" read differently.
 */
const listingScript = `
for root in ${layoutRoots.join(' ')}; do
  if [ -e "$root" ] || [ -L "$root" ]; then
    find "$root" -printf '%p\\t%M\\t%s\\t%l\\n'
  else
    printf '%s\\t(absent)\\n' "$root"
  fi
done
find ${productPaths.unitDir} -name '${unitGlob}' -printf '%p\\t%M\\t%s\\t%l\\n'
`;

/** Renders the product's layout on the host as an indented listing, sorted by path. */
export async function readLayoutTree(host: Host): Promise<string> {
  const result = await host.run(listingScript);
  const entries = result.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .sort((a, b) => a.localeCompare(b));
  const rendered = entries.map(formatEntry);
  if (result.exitCode !== 0) rendered.push(`(listing failed: ${result.stderr.trim()})`);
  return rendered.join('\n');
}

function formatEntry(line: string): string {
  const [entryPath = '', mode = '', size = '', target = ''] = line.split('\t');
  if (mode === '(absent)') return `${entryPath}  (absent)`;
  const link = target === '' ? '' : ` -> ${target}`;
  return `${mode} ${size.padStart(10)}  ${entryPath}${link}`;
}
