import { canonicalPath, cleanPath } from '@aks-flex-node/fs';

/**
 * Whether `p` is strictly below `legacy`, in either spelling of it: as
 * written and resolved. `/proc/self/exe` gives resolved paths, and on some
 * images the legacy root is itself a link (`/usr/local -> /var/usrlocal`).
 * `/usr/localother` is not under `/usr/local`.
 */
export async function isUnder(p: string, legacy: string): Promise<boolean> {
  const cleaned = cleanPath(p);
  if (cleaned.startsWith(`${cleanPath(legacy)}/`)) return true;
  return cleaned.startsWith(`${await canonicalPath(legacy)}/`);
}

/** Whether `p` is `legacy` itself (either spelling) or {@link isUnder} it. */
export async function isAtOrUnder(p: string, legacy: string): Promise<boolean> {
  const cleaned = cleanPath(p);
  if (cleaned === cleanPath(legacy) || cleaned === (await canonicalPath(legacy))) return true;
  return isUnder(p, legacy);
}
