import { cleanPath } from '@aks-flex-node/fs';

/**
 * Why a tar entry name is unsafe to honour, or `undefined` when it is safe
 * (spec agentbinary §3.3, exact mode). The name must already be clean:
 * `./agent` and `agent/` are refused rather than cleaned, because an archive
 * our build made never contains them, so one that does was made elsewhere.
 */
export function explainUnsafeEntryName(name: string): string | undefined {
  if (name === '') return 'has an empty name';
  if (name.includes('\\')) return 'has a backslash in its name';
  if (name.startsWith('/')) return 'has an absolute name';
  const clean = cleanPath(name);
  if (clean === '.' || clean === '..') return 'names the archive root or its parent';
  if (clean.startsWith('../')) return 'points outside the archive';
  if (clean !== name) return `has a name that is not clean (it means ${clean})`;
  return undefined;
}

/** An entry name as shown in a message: quoted, control characters escaped, and bounded. */
export function quoteEntryName(name: string): string {
  const shown = name.length > 200 ? `${name.slice(0, 200)}…` : name;
  return JSON.stringify(shown);
}
