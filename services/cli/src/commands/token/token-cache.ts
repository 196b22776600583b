// node:fs's synchronous calls, not node:fs/promises or node:crypto: each
// loads modules that cost the kubelet's every `token` call milliseconds
// (bench/token-startup.sh), and a one-shot command has nothing to overlap.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { errnoCode, messageOf } from '@aks-flex-node/log';
import { sha256Hex } from './sha256.js';

/** A token as the cache keeps it. */
export interface CachedToken {
  readonly token: string;
  readonly expiresOnTimestamp: number;
}

/**
 * A cached token is used only while it has this long left: client-go asks
 * the plugin again once the expiry it was given passes, and a token handed
 * out with a minute left could expire on its way to the API server. MSAL and
 * kubelogin refresh at the same margin.
 */
export const refreshMarginMs = 5 * 60 * 1000;

/** How the cache sees the process: tests pass another uid; production passes process.geteuid(). */
export interface TokenCacheHost {
  readonly dir: string;
  readonly euid: number;
  readonly now: () => number;
}

/**
 * The file name of a credential's token: a SHA-256 over everything that
 * makes it a different credential (method, tenant, client, endpoint, scope,
 * a digest of the secret), so no two credentials share an entry and no
 * setting appears in the name.
 */
export function tokenCacheKey(parts: Record<string, string | undefined>): string {
  // Code-point order, not localeCompare: that loads ICU's collator, which
  // cost the kubelet's every call more than the rest of the cache hit.
  const canonical = JSON.stringify(
    Object.entries(parts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return sha256Hex(canonical);
}

/**
 * The one reader of the cache: the token under `key` when it is root's, in a
 * root-only directory, parses, and has more than {@link refreshMarginMs}
 * left; undefined otherwise (a miss asks the token service). Only root uses
 * the cache: a token is a secret, and another user's directory is not trusted.
 */
export function readCachedToken(host: TokenCacheHost, key: string): CachedToken | undefined {
  if (host.euid !== 0) return undefined;
  const file = path.join(host.dir, `${key}.json`);
  let text: string;
  try {
    const info = lstatSync(file);
    if (!info.isFile() || info.uid !== 0 || (info.mode & 0o077) !== 0) return undefined;
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
    throw error;
  }
  const cached = parseCachedToken(text);
  if (cached === undefined || cached.expiresOnTimestamp - host.now() <= refreshMarginMs)
    return undefined;
  return cached;
}

function parseCachedToken(text: string): CachedToken | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<CachedToken>;
    const { token, expiresOnTimestamp } = parsed;
    if (typeof token !== 'string' || token === '' || typeof expiresOnTimestamp !== 'number')
      return undefined;
    return { token, expiresOnTimestamp };
  } catch {
    // A torn or foreign file is a miss: the next token replaces it.
    return undefined;
  }
}

/**
 * Keeps `token` under `key`: written 0600 to a temporary name and renamed,
 * so a concurrent reader sees the old file or the new one, never a torn one.
 * The directory is made (or made again) 0700. Returns why the token was not
 * kept, for a warning, or undefined; the token itself was still good.
 */
export function writeCachedToken(
  host: TokenCacheHost,
  key: string,
  token: CachedToken,
): string | undefined {
  if (host.euid !== 0) return undefined;
  const file = path.join(host.dir, `${key}.json`);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    ensureRootOnlyDir(host.dir);
    writeFileSync(temporary, JSON.stringify(token), { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
    return undefined;
  } catch (error) {
    rmSync(temporary, { force: true });
    return `token cache ${host.dir} not written: ${messageOf(error)}`;
  }
}

/** Makes `dir` (and missing parents) 0700, or refuses one that is not root's directory. */
function ensureRootOnlyDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = lstatSync(dir);
  if (!info.isDirectory() || info.uid !== 0) {
    throw new Error(`${dir} is not a directory owned by root`);
  }
  if ((info.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}
