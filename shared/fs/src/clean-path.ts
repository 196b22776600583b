/**
 * Cleans a path lexically, as Go's `path.Clean`: collapses `//`, drops `.`,
 * resolves `..` against the preceding component, and strips a trailing slash
 * except on `/`. Node's `path.normalize` keeps the trailing slash, and the
 * host root compares cleaned strings, so `link/./x/` must become `link/x`.
 */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const kept: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') {
      kept.push(part);
    } else if (kept.length > 0 && kept[kept.length - 1] !== '..') {
      kept.pop();
    } else if (!rooted) {
      // `..` above a relative start is kept; above `/` it is `/` again.
      kept.push('..');
    }
  }
  const joined = kept.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}
