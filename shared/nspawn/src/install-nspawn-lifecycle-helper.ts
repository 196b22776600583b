import { lstat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { installFile, makeIoError } from '@aks-flex-node/fs';
import { resolveHostRoot, type HostRootPaths } from '@aks-flex-node/hostroot';
import { nspawnLifecycleFile } from '@aks-flex-node/layout';
import { isNotFound, type Logger } from '@aks-flex-node/log';
import { fileIdentity, isRecordedCopy, rememberCopy } from './file-digests.js';
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
): Promise<string> {
  return installNspawnLifecycleHelperUnder(await resolveHostRoot(paths), log, executable);
}

/**
 * The same under an explicit resolved root, for the move's unit rewriting,
 * which is told the root it points the units at. The copy goes through a
 * synced temp file renamed into place (0755), so a hook running the helper
 * meanwhile runs the old file or the new one, never a partial one. A helper
 * already identical to the executable is left as it is.
 */
export async function installNspawnLifecycleHelperUnder(
  resolvedRoot: string,
  log: Logger,
  executable: string,
): Promise<string> {
  const helper = nspawnLifecycleHelperUnder(resolvedRoot);
  if (await sameContent(helper, executable)) return helper;
  const executableBefore = await fileIdentity(executable);
  await installFile(executable, helper, { mode: 0o755 });
  await rememberCopy(
    { path: helper, before: await fileIdentity(helper) },
    { path: executable, before: executableBefore },
  );
  log.info({ path: helper, from: executable }, 'installed the nspawn lifecycle helper');
  return helper;
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
