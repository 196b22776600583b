/**
 * A candidate's source, in one module: the two kinds an upgrade names (a
 * release archive at a URL, a binary already on the host), the trust a
 * binary on the host must earn before root runs it (issue 28 item 2), the
 * opener that applies that trust, and the one fetcher that makes either kind
 * the local candidate file. The CLI's snapshot and preflight open a
 * candidate through the same opener.
 *
 * Only root's files are trusted: anyone who can write a file, or rename
 * another file over its name, decides what root runs. The rule is pure,
 * over facts a caller gathered (fstat of the open candidate, lstat of each
 * directory above it), so every case can be tested as a row; the opener
 * gathers those facts through the descriptor it then reads the candidate from.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentUpgradeRequest } from '@aks-flex-node/api';
import {
  downloadArchive,
  extractExactMember,
  parseArchiveSource,
  releaseArchiveMember,
  type ArchiveSource,
  type DownloadProgress,
} from '@aks-flex-node/archive';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { cleanPath, installOpenFile, makeIoError } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';

// The rule, over facts a caller gathered.

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

// The opener that applies the rule to a candidate on disk.

/** Agent binaries are capped as the archive members are (spec agentbinary §3.1). */
export const maxCandidateBytes = 256 * 1024 * 1024;

/** A candidate opened once and judged through that descriptor. */
export interface TrustedCandidate {
  /** Read from here, from offset 0; the caller closes it. */
  readonly handle: FileHandle;
  readonly size: number;
}

const untrustedHint =
  'anyone who can write the file or a directory above it decides what root runs; ' +
  'put the release binary where only root can write and name that, for example ' +
  '`install -d -m 0700 /root/aks-flex-node-release` and extract the release archive, ' +
  'checked against its .sha256, with `tar -xzf ARCHIVE -C /root/aks-flex-node-release`; ' +
  'or upgrade with `aks-flex-node agent-upgrade --url URL --sha256 HEX`';

/**
 * Opens a candidate binary for the one read that copies it (issue 28 item 2).
 * The name is resolved once and opened without following a link, and every
 * check is made on the open descriptor: a regular file with an execute bit
 * and a plausible size, owned by root and writable by no one else. Then
 * every directory above it is checked (the rule above). A file that
 * only root could have changed, read through the descriptor that was
 * checked, cannot be swapped between the check and the copy.
 *
 * Throws UPGRADE_REFUSED (missing, unusable or untrusted; the message says
 * why, the hint how to fix it).
 */
export async function openTrustedCandidate(
  source: string,
  trust: CandidateTrust,
): Promise<TrustedCandidate> {
  const resolved = await realpath(source).catch((error: unknown) => {
    throw makeIoError('resolve the candidate', source, error, { code: 'UPGRADE_REFUSED' });
  });
  // A device is never opened: opening some has effects (a watchdog starts its timer).
  const named = await lstat(resolved).catch((error: unknown) => {
    throw makeIoError('inspect the candidate', source, error, { code: 'UPGRADE_REFUSED' });
  });
  refuseUnusable(named, source);
  let handle: FileHandle;
  try {
    // O_NOFOLLOW: the name is resolved already, so a link here was put there since.
    // O_NONBLOCK: a FIFO put there since the lstat must be refused, not block the open.
    handle = await open(resolved, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    throw makeIoError('open the candidate', source, error, { code: 'UPGRADE_REFUSED' });
  }
  try {
    const info = await handle.stat();
    const size = refuseUnusable(info, source);
    // The directories are checked after the open: one that only root can
    // change now could not have been changed by anyone else before it.
    const directories = await inspectDirectories(directoriesAbove(resolved, trust.topDir));
    const why = distrustOfSource(entryFacts(resolved, info), directories, trust);
    if (why !== undefined) {
      const named = resolved === source ? source : `${source} (${resolved})`;
      throw new AgentError(
        'UPGRADE_REFUSED',
        `the candidate ${named} is not trusted: it ${why}; it would run as root, so only root may be able to change it`,
        { path: source, hint: untrustedHint },
      );
    }
    return { handle, size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Refuses a staging directory (where the copy that runs is written) that
 * anyone but root could write, or that sits below such a directory.
 * Throws UPGRADE_REFUSED or HOST_ROOT_IO.
 */
export async function refuseSharedStaging(dir: string, trust: CandidateTrust): Promise<void> {
  const directories = await inspectDirectories([dir, ...directoriesAbove(dir, trust.topDir)]);
  const why = distrustOfStaging(directories, trust);
  if (why === undefined) return;
  throw new AgentError(
    'UPGRADE_REFUSED',
    `the staging directory ${dir} is not root-only: ${why}; the candidate copied there runs as root`,
    {
      path: dir,
      hint: 'make every directory on that path owned by root and not writable by group or others (chown root:root DIR; chmod go-w DIR), then retry',
    },
  );
}

function refuseUnusable(info: Stats, source: string): number {
  const refuse = (why: string) =>
    new AgentError('UPGRADE_REFUSED', `the candidate ${source} ${why}`, {
      path: source,
      hint: `name an aks-flex-node release binary; check it with \`ls -lL ${source}\``,
    });
  if (!info.isFile()) throw refuse('is not a regular file');
  if ((info.mode & 0o111) === 0) throw refuse('has no execute bit');
  if (info.size === 0) throw refuse('is empty');
  if (info.size > maxCandidateBytes) {
    throw refuse(
      `is ${info.size} bytes, over the ${maxCandidateBytes}-byte limit for an agent binary`,
    );
  }
  return info.size;
}

async function inspectDirectories(dirs: readonly string[]): Promise<EntryFacts[]> {
  const facts: EntryFacts[] = [];
  for (const dir of dirs) {
    // lstat: a link among them would make the checked path differ from the used one.
    const info = await lstat(dir).catch((error: unknown) => {
      throw makeIoError('inspect', dir, error, { code: 'UPGRADE_REFUSED' });
    });
    facts.push(entryFacts(dir, info));
  }
  return facts;
}

function entryFacts(path: string, info: Stats): EntryFacts {
  const kind = info.isFile()
    ? 'file'
    : info.isDirectory()
      ? 'directory'
      : info.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return { path, kind, uid: info.uid, mode: info.mode };
}

// The source an upgrade names: parsed and checked at the door, then fetched
// by the one fetcher. Fetching is where the two kinds differ; the daemon's
// space check sizes each kind too (upgrade-requests.ts).

/**
 * Where an upgrade's candidate comes from, after validation: a release
 * archive at a URL, or a binary already on the host (`agent-upgrade
 * --candidate` hands over its private snapshot). Both are staged, checked,
 * switched and judged the same way; only fetching differs.
 */
export type UpgradeSource =
  | { kind: 'archive'; archive: ArchiveSource; redactedUrl: string }
  | { kind: 'binary'; binaryPath: string; redactedUrl: string };

/**
 * Validates a request's source before anything runs. `redactedUrl` (no query
 * or fragment) is the only form logged, stored or returned. The request
 * schema admits exactly one of `url` and `binaryPath`. Throws INVALID_ARGUMENT.
 */
export function parseUpgradeSource(source: AgentUpgradeRequest['source']): UpgradeSource {
  if ('url' in source) {
    const archive = parseArchiveSource(source);
    return { kind: 'archive', archive, redactedUrl: archive.redactedUrl };
  }
  const { binaryPath } = source;
  if (!path.isAbsolute(binaryPath) || cleanPath(binaryPath) !== binaryPath) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `source.binaryPath ${binaryPath} is not an absolute, clean path`,
      { path: binaryPath, hint: 'name the binary by its absolute path' },
    );
  }
  return { kind: 'binary', binaryPath, redactedUrl: pathToFileURL(binaryPath).href };
}

/**
 * Checks at the door what can be checked at once (a named binary exists, is
 * usable, and only root can change it), so a bad source is refused before
 * the request is answered rather than failing in the background. The fetch
 * checks again on the descriptor it copies from. Throws UPGRADE_REFUSED.
 */
export async function precheckUpgradeSource(
  source: UpgradeSource,
  trust: CandidateTrust,
): Promise<void> {
  if (source.kind !== 'binary') return;
  const candidate = await openTrustedCandidate(source.binaryPath, trust);
  await candidate.handle.close();
}

/** What a fetch reports while it runs, and what cancels it. */
export interface FetchEvents {
  onProgress: (progress: DownloadProgress) => void;
  /** Called when the download is done and the binary is being written. */
  onExtracting: () => void;
  /** Cancels it; a download stops at once. */
  signal?: AbortSignal | undefined;
}

/** Makes a source's candidate binary a local file at `target`, atomically. */
export type CandidateFetcher = (
  source: UpgradeSource,
  target: string,
  events: FetchEvents,
) => Promise<void>;

/**
 * Builds the daemon's one fetcher, the only place the two kinds of source
 * differ. A release archive (an http, https or file URL of
 * `aks-flex-node-linux-<amd64|arm64>.tar.gz`, as the Go releases name it) is
 * downloaded into `downloadsDir` and its one member, this architecture's
 * binary, extracted at the target; the archive is removed either way. A
 * binary on the host is opened once, checked through that descriptor
 * (usable, and only root can change it: `trust`), and copied from it
 * (0755); the staged copy is what is then run and switched in. The source
 * stays the caller's (the CLI removes its snapshot when it is done).
 */
export function createCandidateFetcher(
  downloadsDir: string,
  trust: CandidateTrust = hostCandidateTrust,
): CandidateFetcher {
  const member = releaseArchiveMember();
  return async (source, target, events) => {
    switch (source.kind) {
      case 'archive':
        return fetchFromArchive(source.archive, target, { downloadsDir, member, events });
      case 'binary':
        return fetchFromHost(source.binaryPath, target, { trust, events });
      default: {
        const unknown: never = source;
        throw new Error(`unknown upgrade source ${JSON.stringify(unknown)}`);
      }
    }
  };
}

async function fetchFromHost(
  binaryPath: string,
  target: string,
  context: { trust: CandidateTrust; events: FetchEvents },
): Promise<void> {
  const { handle, size } = await openTrustedCandidate(binaryPath, context.trust);
  try {
    context.events.onProgress({ receivedBytes: size, totalBytes: size });
    context.events.onExtracting();
    await installOpenFile(handle, binaryPath, target, { mode: 0o755 });
  } finally {
    await handle.close();
  }
}

async function fetchFromArchive(
  archive: ArchiveSource,
  target: string,
  context: { downloadsDir: string; member: string; events: FetchEvents },
): Promise<void> {
  const { downloadsDir, member, events } = context;
  // Root-only: the archive is code the host will run.
  await mkdir(downloadsDir, { recursive: true, mode: 0o700 });
  const downloaded = await downloadArchive(archive, {
    tempDir: downloadsDir,
    onProgress: (progress) => {
      // Bytes are in the temporary archive: a kill here leaves it for the start-time sweep.
      if (progress.receivedBytes > 0) failpoint(failpoints.upgradeDownloading);
      events.onProgress(progress);
    },
    signal: events.signal,
  });
  try {
    events.onExtracting();
    await extractExactMember(downloaded.path, {
      member,
      targetPath: target,
      onStaged: () => {
        failpoint(failpoints.upgradeExtracting);
      },
    });
  } finally {
    await rm(downloaded.path, { force: true });
  }
}
