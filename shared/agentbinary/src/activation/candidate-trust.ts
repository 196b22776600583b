import path from 'node:path';

/**
 * Who may have changed a candidate before root runs it (issue 28 item 2).
 * Only root's files are trusted: anyone who can write a file, or rename
 * another file over its name, decides what root runs. This module is the
 * rule alone, over facts a caller gathered (fstat of the open candidate,
 * lstat of each directory above it), so every case can be tested as a row.
 */

/** Which owner is trusted and how far up the directories are checked. */
export interface CandidateTrust {
  /** The one owner whose files and directories are trusted: root (0) on a host. */
  ownerUid: number;
  /** The highest directory checked, inclusive: `/` on a host; a scratch directory in unit tests. */
  topDir: string;
}

/** The host's rule: root's, up to `/`. */
export const hostCandidateTrust: CandidateTrust = { ownerUid: 0, topDir: '/' };

/** What the rule needs of one file or directory (from fstat or lstat). */
export interface EntryFacts {
  path: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
  uid: number;
  /** `st_mode`'s permission bits, sticky bit included. With an ACL, the group bits are its mask. */
  mode: number;
}

const othersWrite = 0o002;
const groupWrite = 0o020;
const sticky = 0o1000;

/**
 * Why a candidate source is not trusted, as words that follow "it", or
 * undefined when it is. The file must be a regular file of the trusted
 * owner that neither its group nor others can write. Each directory above
 * it must be the owner's and writable by nobody else, except that a sticky
 * one (`/tmp`, `/var/tmp`) is accepted: others may add names there but can
 * neither rename nor remove the owner's entries, and every entry below it
 * is checked in turn. A name someone else created in advance (the fixed
 * `/var/tmp/aks-flex-node` an earlier hint named) stays theirs after root
 * copies over it, so the owner check refuses it.
 */
export function distrustOfSource(
  file: EntryFacts,
  directories: readonly EntryFacts[],
  trust: CandidateTrust,
): string | undefined {
  if (file.kind !== 'file') return `is a ${file.kind}, not a regular file`;
  const own = distrustOfEntry(file, trust.ownerUid);
  if (own !== undefined) return own;
  for (const dir of directories) {
    const why = distrustOfDirectory(dir, trust.ownerUid, { acceptSticky: true });
    if (why !== undefined) return `is in ${dir.path}, which ${why}`;
  }
  return undefined;
}

/**
 * Why a staging directory (where the copy that runs is written) is not
 * root-only, or undefined when it is. Stricter than a source: no directory
 * on its path may be writable by others, sticky or not, because names are
 * created in it and a stranger could plant one first.
 */
export function distrustOfStaging(
  directories: readonly EntryFacts[],
  trust: CandidateTrust,
): string | undefined {
  for (const dir of directories) {
    const why = distrustOfDirectory(dir, trust.ownerUid, { acceptSticky: false });
    if (why !== undefined) return `${dir.path} ${why}`;
  }
  return undefined;
}

function distrustOfDirectory(
  dir: EntryFacts,
  ownerUid: number,
  rule: { acceptSticky: boolean },
): string | undefined {
  // A link here means the path changed after it was resolved: the checked directory is not the one used.
  if (dir.kind !== 'directory') return `is a ${dir.kind}, not a directory`;
  if (rule.acceptSticky && (dir.mode & sticky) !== 0 && dir.uid === ownerUid) return undefined;
  return distrustOfEntry(dir, ownerUid);
}

function distrustOfEntry(entry: EntryFacts, ownerUid: number): string | undefined {
  const mode = `mode ${(entry.mode & 0o7777).toString(8).padStart(4, '0')}`;
  if (entry.uid !== ownerUid) {
    return `is owned by uid ${entry.uid}, not ${describeUid(ownerUid)}`;
  }
  if ((entry.mode & othersWrite) !== 0) return `is writable by others (${mode})`;
  if ((entry.mode & groupWrite) !== 0) return `is writable by its group (${mode})`;
  return undefined;
}

function describeUid(uid: number): string {
  return uid === 0 ? 'root (uid 0)' : `uid ${uid}`;
}

/** Every directory above `file`, nearest first, up to `topDir` (or `/` when `topDir` is not above it). */
export function directoriesAbove(file: string, topDir: string): string[] {
  const dirs: string[] = [];
  let dir = file;
  for (;;) {
    const parent = path.dirname(dir);
    if (parent === dir) return dirs;
    dirs.push(parent);
    if (parent === topDir) return dirs;
    dir = parent;
  }
}
