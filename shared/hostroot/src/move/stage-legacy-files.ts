import { constants } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readlink, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { canonicalPath, cleanPath, makeIoError, mkdirMode, syncDirectory } from '@aks-flex-node/fs';
import { AgentError, isNotFound } from '@aks-flex-node/log';
import { movingMarkerName } from '@aks-flex-node/layout';
import { parentOf, stagingOf, type HostRootPaths } from '../host-root-paths.js';
import { rebaseLinkTarget } from './rebase-link-target.js';

/**
 * Copies the legacy files into a fresh staging directory beside the root,
 * with the `.moving` marker, and makes the copy durable (spec hostroot §4.4
 * stage). Nothing in use changes: units, links and the recovery script all
 * still name the legacy root, whose files stay. Throws HOST_ROOT_IO.
 */
export async function stageLegacyFiles(
  paths: HostRootPaths,
  files: readonly string[],
): Promise<void> {
  const staging = stagingOf(paths);
  // An earlier attempt's copy is never trusted or reused; a link planted at
  // the name is unlinked, not followed.
  try {
    await rm(staging, { recursive: true, force: true });
  } catch (error) {
    throw makeIoError('remove', staging, error);
  }
  failpoint(failpoints.moveStagingCleared);
  // The parent is the host's: created 0755 only when missing.
  await mkdirMode(parentOf(paths), 0o755);
  await createFreshDirectory(staging);
  const final = path.join(await canonicalPath(parentOf(paths)), path.basename(paths.root));
  const prefixes = [cleanPath(paths.legacy), await canonicalPath(paths.legacy)];
  const dirs = new Set<string>([staging]);
  // Files copy side by side (each in a thread of libuv's pool, its fsync
  // included) while the rest is laid out: the fsyncs overlap instead of
  // each waiting for the one before.
  const copies: Array<Promise<void>> = [];
  const [layout] = await Promise.allSettled([
    layOut(paths.legacy, staging, files, { final, prefixes, dirs, copies }),
  ]);
  // A lay-out error wins (the copies under way are waited for first, so
  // none writes after this returns); otherwise the first failed copy.
  const copied = await Promise.allSettled(copies);
  const failed = [layout, ...copied].find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  failpoint(failpoints.moveStagingCopied);
  await writeMarker(staging);
  failpoint(failpoints.moveStagingMarked);
  // Every file was fsynced as it was copied; the directories' entries are
  // next, deepest first, so the copy is whole on disk before it replaces the link.
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) await syncDirectory(dir);
  failpoint(failpoints.moveStagingSynced);
}

async function layOut(
  legacy: string,
  staging: string,
  files: readonly string[],
  context: StageContext,
): Promise<void> {
  for (const rel of files) await stageOne(legacy, staging, rel, context);
}

interface StageContext {
  readonly final: string;
  readonly prefixes: readonly string[];
  /** Directories created in the copy, for the fsync of their entries. */
  readonly dirs: Set<string>;
  /** The regular files' copies under way. */
  readonly copies: Array<Promise<void>>;
}

/**
 * Plain mkdir, not mkdirMode: anything at the name now appeared after the
 * removal, so the copy must not go where it leads. chmod beats the umask.
 */
async function createFreshDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o755 });
  } catch (error) {
    throw makeIoError('create', dir, error);
  }
  try {
    await chmod(dir, 0o755);
  } catch (error) {
    throw makeIoError('set mode of', dir, error);
  }
}

async function stageOne(
  legacy: string,
  staging: string,
  rel: string,
  context: StageContext,
): Promise<void> {
  const source = path.join(legacy, rel);
  let info;
  try {
    info = await lstat(source);
  } catch (error) {
    // A file the legacy root lacks gets nothing in the copy, not even its directory.
    if (isNotFound(error)) return;
    throw makeIoError('inspect', source, error);
  }
  const target = path.join(staging, rel);
  await createParents(staging, path.dirname(target), context.dirs);
  if (info.isSymbolicLink()) {
    await copyLink(source, target, context);
  } else if (info.isFile()) {
    context.copies.push(copyRegularFile(source, target, info.mode & 0o777));
  } else {
    throw new AgentError('HOST_ROOT_IO', `${source} is neither a file nor a symlink`, {
      path: source,
      hint: `move ${source} aside (the agent installs only files and links there), then restart the agent`,
    });
  }
}

async function createParents(staging: string, dir: string, created: Set<string>): Promise<void> {
  await mkdirMode(dir, 0o755);
  for (let d = dir; d !== staging && d.startsWith(`${staging}/`); d = path.dirname(d))
    created.add(d);
}

/** Links are recreated with rebased targets, never copied as they are; they need not resolve yet. */
async function copyLink(source: string, target: string, context: StageContext): Promise<void> {
  let text: string;
  try {
    text = await readlink(source);
  } catch (error) {
    throw makeIoError('read', source, error);
  }
  const rebased = rebaseLinkTarget(text, context.prefixes, context.final);
  try {
    await symlink(rebased, target);
  } catch (error) {
    throw makeIoError('link', target, error, { object: `to ${rebased}` });
  }
}

/**
 * copyFile lets the kernel copy (a reflink where the filesystem shares
 * extents, FICLONE falling back to copy_file_range elsewhere), so a 130 MB
 * binary never passes through this process. EXCL: the staging directory is
 * fresh, so anything at the name is not ours. Then the exact mode (copyFile keeps the source's, but a umask
 * must not matter) and one fsync.
 */
async function copyRegularFile(source: string, target: string, mode: number): Promise<void> {
  try {
    await copyFile(source, target, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    const handle = await open(target, 'r+');
    try {
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw makeIoError('copy', source, error, { object: `to ${target}` });
  }
}

/** Written into the copy, so it arrives in the root with the rename and marks the move unfinished. */
async function writeMarker(staging: string): Promise<void> {
  const marker = path.join(staging, movingMarkerName);
  try {
    const handle = await open(marker, 'wx', 0o644);
    try {
      await handle.chmod(0o644);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw makeIoError('mark', staging, error, { object: `with ${movingMarkerName}` });
  }
}
