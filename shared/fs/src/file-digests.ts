import { readFile, stat } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import { fileSha256 } from './file-sha256.js';
import { makeIoError } from './io-error.js';
import { writeFileAtomic } from './write-file-atomic.js';

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
// How long before a read a file must have last changed for its digest to be
// kept: many ticks of the coarse clock that stamps ctime.
const settledNs = 1_000_000_000n;
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
  const readAtNs = BigInt(Date.now()) * 1_000_000n;
  const identity = await identityOfFile(file);
  const cached = known.get(file);
  if (cached !== undefined && sameIdentity(cached.identity, identity)) return cached.digest;
  const digest = await fileSha256(file);
  // Kept only if the file did not change while it was read, and was last
  // changed well before the read: the kernel stamps ctime from a coarse clock
  // (a tick of up to 10 ms), so a second write in the tick of the first, made
  // while the file is read, leaves the same identity on other bytes.
  if (
    readAtNs - BigInt(identity.ctimeNs) > settledNs &&
    sameIdentity(identity, await identityOfFile(file))
  ) {
    known.set(file, { identity, digest });
    unsaved = true;
  }
  return digest;
}

interface KnownCopy {
  /** The copy's identity when it was known to hold the source's bytes. */
  identity: FileIdentity;
  source: string;
  sourceIdentity: FileIdentity;
}

// Files known to hold another file's bytes, by the copy's path: the helper
// installed from an executable whose digest was never taken (an upgrade's
// new binary) is recognised at the next start without reading either.
const copies = new Map<string, KnownCopy>();

/**
 * Records that `copy` holds the bytes of `source`: just copied, or compared
 * byte for byte. The identities are each file's before the copy or the
 * comparison; nothing is recorded (false) when either changed since.
 */
export async function rememberCopy(
  copy: { path: string; before: FileIdentity },
  source: { path: string; before: FileIdentity },
): Promise<boolean> {
  const copyIdentity = await identityOfFile(copy.path);
  const sourceIdentity = await identityOfFile(source.path);
  if (!sameIdentity(copy.before, copyIdentity) || !sameIdentity(source.before, sourceIdentity)) {
    return false;
  }
  copies.set(copy.path, { identity: copyIdentity, source: source.path, sourceIdentity });
  unsaved = true;
  return true;
}

/** Whether `copy` is known to hold the bytes of `source`, both unchanged since. */
export async function isRecordedCopy(copy: string, source: string): Promise<boolean> {
  const recorded = copies.get(copy);
  if (recorded?.source !== source) return false;
  return (
    sameIdentity(recorded.identity, await identityOfFile(copy)) &&
    sameIdentity(recorded.sourceIdentity, await identityOfFile(source))
  );
}

/** A file's identity now, to hand to {@link rememberCopy}. Throws HOST_ROOT_IO. */
export { identityOfFile as fileIdentity };
export type { FileIdentity };

function isIdentity(value: unknown): value is FileIdentity {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return (['dev', 'ino', 'size', 'mtimeNs', 'ctimeNs'] as const).every(
    (key) => typeof fields[key] === 'string',
  );
}

function isKnownDigest(value: unknown): value is KnownDigest {
  if (typeof value !== 'object' || value === null) return false;
  const { identity, digest } = value as Record<string, unknown>;
  return typeof digest === 'string' && /^[0-9a-f]{64}$/.test(digest) && isIdentity(identity);
}

function isKnownCopy(value: unknown): value is KnownCopy {
  if (typeof value !== 'object' || value === null) return false;
  const { identity, source, sourceIdentity } = value as Record<string, unknown>;
  return typeof source === 'string' && isIdentity(identity) && isIdentity(sourceIdentity);
}

function entriesOf(value: unknown): [string, unknown][] {
  return typeof value === 'object' && value !== null ? Object.entries(value) : [];
}

/**
 * Loads the digests and copies an earlier daemon recorded, so a restart does
 * not read the same files again. The record lives under /run: a reboot clears
 * it, so device and inode numbers are never compared across boots. A missing
 * or unreadable record is an empty one: the files are read.
 */
export async function restoreFileDigests(record: string): Promise<void> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(record, 'utf8'));
  } catch {
    return;
  }
  const { digests, copies: copied } = (parsed ?? {}) as Record<string, unknown>;
  for (const [file, entry] of entriesOf(digests)) {
    if (isKnownDigest(entry) && !known.has(file)) known.set(file, entry);
  }
  for (const [file, entry] of entriesOf(copied)) {
    if (isKnownCopy(entry) && !copies.has(file)) copies.set(file, entry);
  }
}

/**
 * Writes what is known to the record (atomically, 0600) when something is
 * new since the last write. Throws HOST_ROOT_IO; callers treat the record as
 * an optimisation and go on without it.
 */
export async function saveFileDigests(record: string): Promise<void> {
  if (!unsaved) return;
  unsaved = false;
  const content = { digests: Object.fromEntries(known), copies: Object.fromEntries(copies) };
  try {
    await writeFileAtomic(record, `${JSON.stringify(content)}\n`, { mode: 0o600 });
  } catch (error) {
    unsaved = true;
    throw error;
  }
}
