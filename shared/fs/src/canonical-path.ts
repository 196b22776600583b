import path from 'node:path';
import { cleanPath } from './clean-path.js';
import { realpath } from './path-lookups.js';

/**
 * Resolves the symlinks in the longest leading part of `p` that exists and
 * appends the missing tail as written (spec hostroot §3.1). The answer is the
 * same before and after the tail is created, so paths computed before a first
 * install still equal those computed after it, and both compare equal with
 * resolved link targets. Paths are expected to be absolute; a relative one is
 * resolved against the working directory where it exists.
 */
export async function canonicalPath(p: string): Promise<string> {
  const cleaned = cleanPath(p);
  let candidate = cleaned;
  let tail = '';
  for (;;) {
    const resolved = await resolveOrUndefined(candidate);
    if (resolved !== undefined) return tail === '' ? resolved : cleanPath(`${resolved}/${tail}`);
    const parent = path.dirname(candidate);
    if (parent === candidate) return cleaned;
    tail = tail === '' ? path.basename(candidate) : `${path.basename(candidate)}/${tail}`;
    candidate = parent;
  }
}

/**
 * Any failure counts as "does not resolve", not only ENOENT: a dangling link,
 * a loop, EACCES or ENOTDIR all mean this part is treated as missing, so a
 * dangling link component is kept as written instead of failing the caller.
 */
async function resolveOrUndefined(candidate: string): Promise<string | undefined> {
  try {
    return await realpath(candidate);
  } catch {
    return undefined;
  }
}
