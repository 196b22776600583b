import path from 'node:path';
import { cleanPath } from '@aks-flex-node/fs';

/**
 * Where a link copied from the legacy root must point in the copy (spec
 * hostroot §4.4 rebase): an absolute target under either spelling of the
 * legacy root (as written, or resolved) is moved under `final`, where the
 * root will resolve once the copy is in place. The blue/green links in the
 * copy then lead into the copy, and compare equal to paths built from the
 * resolved root. Relative targets, the legacy root itself and siblings such
 * as `/usr/localother` are returned unchanged.
 */
export function rebaseLinkTarget(
  target: string,
  prefixes: readonly string[],
  final: string,
): string {
  if (!path.isAbsolute(target)) return target;
  const cleaned = cleanPath(target);
  for (const prefix of prefixes) {
    if (cleaned.startsWith(`${prefix}/`)) return path.join(final, cleaned.slice(prefix.length + 1));
  }
  return target;
}
