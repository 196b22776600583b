import { lstat, realpath } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { agentBinaryPathsUnder, type ExecutableCopy } from '@aks-flex-node/agentbinary';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import {
  fileIdentity,
  installFile,
  isRecordedCopy,
  linkThroughTemp,
  makeIoError,
  rememberCopy,
} from '@aks-flex-node/fs';
import { resolveHostRoot, type HostRootPaths } from '@aks-flex-node/hostroot';
import { nspawnLifecycleFile } from '@aks-flex-node/layout';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import { sameBytes } from './same-bytes.js';

/** The helper's path under a resolved root. */
export function nspawnLifecycleHelperUnder(resolvedRoot: string): string {
  return path.join(resolvedRoot, nspawnLifecycleFile);
}

/**
 * Installs the running executable as the nspawn lifecycle helper under the
 * host root as it resolves now (the legacy root on a linked host, the copy
 * while moving, the legacy root again after an undo). It runs at every
 * daemon start (upstream #378): a helper an earlier release left would
 * regenerate hooks naming the paths that release knows. Returns the helper's
 * path.
 */
export async function installNspawnLifecycleHelper(
  paths: HostRootPaths,
  log: Logger,
  executable: string,
  executableCopy?: ExecutableCopy,
): Promise<string> {
  return installNspawnLifecycleHelperUnder(
    await resolveHostRoot(paths),
    log,
    executable,
    executableCopy,
  );
}

/**
 * The same under an explicit resolved root, for the move's unit rewriting,
 * which is told the root it points the units at.
 *
 * The helper is a hard link to the running executable (issue 26: a third
 * full copy of the 131 MB binary beside the two slots). That stays correct
 * because nothing writes a slot in place: an upgrade, a rollback, the move
 * and a Go release each rename a new file over a name, so the helper keeps
 * the inode it links to (a binary that runs) until the next daemon start
 * links it to that daemon's executable. The link goes through a temporary
 * name renamed over the helper, so a hook running it meanwhile runs the old
 * file or the new one. Where the two names cannot share an inode (the
 * helper's directory on another mount; during a move, the copy and the
 * legacy root), it is linked instead to the copy of the executable this
 * start installed under the root (`executableCopy`, the first start of a
 * binary from elsewhere), which the current slot now holds; failing that,
 * the executable is copied as before: a synced temporary copy renamed into
 * place (0755), left as it is when already identical.
 */
export async function installNspawnLifecycleHelperUnder(
  resolvedRoot: string,
  log: Logger,
  executable: string,
  executableCopy?: ExecutableCopy,
): Promise<string> {
  const helper = nspawnLifecycleHelperUnder(resolvedRoot);
  // link(2) links a symlink itself, not the file it names.
  const source = await realpathOf(executable);
  if (await sameInode(helper, source)) return helper;
  if (await linkHelper(source, helper)) {
    log.info({ path: helper, to: source }, 'linked the nspawn lifecycle helper to the executable');
    return helper;
  }
  if (
    executableCopy !== undefined &&
    (await linkToExecutableCopy(resolvedRoot, helper, source, executableCopy))
  ) {
    log.info(
      { path: helper, executable: source },
      "linked the nspawn lifecycle helper to the current slot: this start installed it as the executable's copy",
    );
    return helper;
  }
  if (await sameContent(helper, source)) return helper;
  const executableBefore = await fileIdentity(source);
  await installFile(source, helper, { mode: 0o755 });
  await rememberCopy(
    { path: helper, before: await fileIdentity(helper) },
    { path: source, before: executableBefore },
  );
  log.info(
    { path: helper, from: source },
    'installed the nspawn lifecycle helper as a copy: it cannot be a hard link to the executable there',
  );
  return helper;
}

/**
 * Whether the helper under `resolvedRoot` is already the running executable:
 * the same file, or a 0755 copy recorded as its while neither changed since
 * (the case {@link installNspawnLifecycleHelperUnder} leaves alone without
 * reading either). Reads only; false when it would have to compare bytes.
 */
export async function isNspawnLifecycleHelperCurrent(
  resolvedRoot: string,
  executable: string,
): Promise<boolean> {
  const helper = nspawnLifecycleHelperUnder(resolvedRoot);
  const source = await realpathOf(executable);
  if (await sameInode(helper, source)) return true;
  const installed = await statOf(helper);
  return (
    installed !== undefined &&
    installed.isFile() &&
    (installed.mode & 0o777) === 0o755 &&
    (await isRecordedCopy(helper, source))
  );
}

/** {@link linkThroughTemp} to the helper, with the helper's crash points. */
function linkHelper(source: string, helper: string): Promise<boolean> {
  return linkThroughTemp(source, helper, {
    linked: () => {
      failpoint(failpoints.helperLinked);
    },
    renamed: () => {
      failpoint(failpoints.helperRenamed);
    },
  });
}

/**
 * Links the helper to the file this start copied the executable into, found
 * under the name the layout gave it (the slot `current` resolves to) and
 * recognised by its device and inode, not by its name: an upgrade that
 * renamed another file over the slot meanwhile is not mistaken for it, and
 * the helper is then copied as before. The copy is recorded as the
 * executable's (as a copy made here would be) only while the executable
 * keeps the identity the copy read, so the next refresh of this boot knows
 * the two agree without reading them. False when there is nothing to link.
 */
async function linkToExecutableCopy(
  resolvedRoot: string,
  helper: string,
  executable: string,
  copy: ExecutableCopy,
): Promise<boolean> {
  let slot: string;
  try {
    slot = await realpath(agentBinaryPathsUnder(resolvedRoot).current);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('resolve', agentBinaryPathsUnder(resolvedRoot).current, error, {
      object: 'to link the nspawn helper to it',
    });
  }
  if (!(await isTheCopy(slot, copy))) return false;
  if (!(await sameInode(helper, slot)) && !(await linkHelper(slot, helper))) return false;
  if (!(await isTheCopy(helper, copy))) return false;
  await rememberCopy(
    { path: helper, before: await fileIdentity(helper) },
    { path: executable, before: copy.executableBefore },
  );
  return true;
}

/** Whether `file` itself (not a link to it) is the copy's file. */
async function isTheCopy(file: string, copy: ExecutableCopy): Promise<boolean> {
  let info;
  try {
    info = await lstat(file, { bigint: true });
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', file, error);
  }
  return info.isFile() && info.dev.toString() === copy.dev && info.ino.toString() === copy.ino;
}

async function realpathOf(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch (error) {
    throw makeIoError('resolve', file, error, { object: 'to install it as the nspawn helper' });
  }
}

/** Whether `helper` is already a name of the executable's inode. */
async function sameInode(helper: string, executable: string): Promise<boolean> {
  const installed = await statOf(helper);
  if (installed === undefined || !installed.isFile()) return false;
  const running = await statOf(executable);
  return running !== undefined && running.dev === installed.dev && running.ino === installed.ino;
}

async function statOf(file: string): Promise<Stats | undefined> {
  try {
    return await lstat(file);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw makeIoError('inspect', file, error);
  }
}

/**
 * Whether `helper` is already a regular 0755 file with the executable's
 * bytes. Known without reading either when this or an earlier daemon of this
 * boot copied or compared them and neither changed since (a restart);
 * otherwise compared byte for byte, which stops at the first difference (an
 * upgrade's new executable).
 */
async function sameContent(helper: string, executable: string): Promise<boolean> {
  const installed = await statOf(helper);
  if (installed === undefined || !installed.isFile() || (installed.mode & 0o777) !== 0o755) {
    return false;
  }
  const running = await statOf(executable);
  // A missing executable fails in installFile, with the path named.
  if (running === undefined || running.size !== installed.size) return false;
  if (await isRecordedCopy(helper, executable)) return true;
  const helperBefore = await fileIdentity(helper);
  const executableBefore = await fileIdentity(executable);
  if (!(await sameBytes(helper, executable, installed.size))) return false;
  // Equal only if neither changed while they were compared.
  return rememberCopy(
    { path: helper, before: helperBefore },
    { path: executable, before: executableBefore },
  );
}
