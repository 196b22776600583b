import { readFile, stat } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { fileSha256, makeIoError, writeFileAtomic } from '@aks-flex-node/fs';

/**
 * What identifies a file's content without reading it: a write changes the
 * ctime (which no caller can set back) and a replacement the inode, so if
 * none of these changed, neither did the bytes. Nanoseconds, as strings, so
 * the record keeps them exactly.
 */
interface FileIdentity {
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

interface KnownDigest {
  identity: FileIdentity;
  digest: string;
}

// Digests by path and identity. Pre-start asks at every machine start and the
// daemon at every start, and hashing a 130 MB helper and executable each time
// costs more than half a second.
const known = new Map<string, KnownDigest>();
// Whether `known` holds digests the record does not have yet.
let unsaved = false;

function identityOf(info: BigIntStats): FileIdentity {
  return {
    dev: info.dev.toString(),
    ino: info.ino.toString(),
    size: info.size.toString(),
    mtimeNs: info.mtimeNs.toString(),
    ctimeNs: info.ctimeNs.toString(),
  };
}

function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

async function identityOfFile(file: string): Promise<FileIdentity> {
  try {
    return identityOf(await stat(file, { bigint: true }));
  } catch (error) {
    throw makeIoError('inspect', file, error);
  }
}

/**
 * The SHA-256 of a file (symlinks followed), hashed only when the file's
 * identity is not one a digest is known for. Throws HOST_ROOT_IO when the
 * file cannot be read.
 */
export async function fileDigest(file: string): Promise<string> {
  const identity = await identityOfFile(file);
  const cached = known.get(file);
  if (cached !== undefined && sameIdentity(cached.identity, identity)) return cached.digest;
  const digest = await fileSha256(file);
  // Kept only if the file did not change while it was read.
  if (sameIdentity(identity, await identityOfFile(file))) {
    known.set(file, { identity, digest });
    unsaved = true;
  }
  return digest;
}

/**
 * Records that `copy` holds the bytes of `source`, whose digest is known: a
 * copy just made need not be read back to be recognised. Ignored unless
 * `source` still has the identity its digest was taken at.
 */
export async function rememberCopy(copy: string, source: string): Promise<void> {
  const original = known.get(source);
  if (original === undefined) return;
  if (!sameIdentity(original.identity, await identityOfFile(source))) return;
  known.set(copy, { identity: await identityOfFile(copy), digest: original.digest });
  unsaved = true;
}

function isKnownDigest(value: unknown): value is KnownDigest {
  if (typeof value !== 'object' || value === null) return false;
  const { identity, digest } = value as { identity?: unknown; digest?: unknown };
  if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) return false;
  if (typeof identity !== 'object' || identity === null) return false;
  const fields = identity as Record<string, unknown>;
  return (['dev', 'ino', 'size', 'mtimeNs', 'ctimeNs'] as const).every(
    (key) => typeof fields[key] === 'string',
  );
}

/**
 * Loads the digests an earlier daemon recorded (a JSON object by path), so a
 * restart does not hash the same files again. The record lives under /run: a
 * reboot clears it, so device and inode numbers are never compared across
 * boots. A missing or unreadable record is an empty one: the files are hashed.
 */
export async function restoreFileDigests(record: string): Promise<void> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(record, 'utf8'));
  } catch {
    return;
  }
  if (typeof parsed !== 'object' || parsed === null) return;
  for (const [file, entry] of Object.entries(parsed)) {
    if (isKnownDigest(entry) && !known.has(file)) {
      known.set(file, { identity: entry.identity, digest: entry.digest });
    }
  }
}

/**
 * Writes the known digests to the record (atomically, 0600) when some are
 * new since the last write. Throws HOST_ROOT_IO; callers treat the record as
 * an optimisation and go on without it.
 */
export async function saveFileDigests(record: string): Promise<void> {
  if (!unsaved) return;
  unsaved = false;
  try {
    await writeFileAtomic(record, `${JSON.stringify(Object.fromEntries(known))}\n`, {
      mode: 0o600,
    });
  } catch (error) {
    unsaved = true;
    throw error;
  }
}
