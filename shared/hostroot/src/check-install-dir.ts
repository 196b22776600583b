import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { canonicalPath, exists, mountFacts } from '@aks-flex-node/fs';
import { parentOf, type HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';
import { plannedHostRoot } from './planned-host-root.js';

/** One preflight check's verdict. */
export interface PreflightCheck {
  name: string;
  level: 'ok' | 'warning' | 'error';
  message: string;
}

/**
 * The install-dir preflight (spec daemon §7.3): the planned `bin` directory
 * must be creatable (its nearest existing ancestor writable) and on a
 * filesystem that can run programs, since installing the binary there is the
 * first thing that happens and would fail with a worse message. Reads only:
 * it plans against the root this host will resolve, without migrating.
 */
export async function checkInstallDir(
  paths: HostRootPaths,
  markers: readonly string[],
): Promise<PreflightCheck> {
  const name = 'install-dir';
  const dir = path.join(await plannedHostRoot(paths, markers), 'bin');
  const ancestor = await nearestExisting(dir);
  const unwritable = await whyRootCannotWrite(ancestor);
  if (unwritable !== undefined) {
    return {
      name,
      level: 'error',
      message: `agent install directory ${dir} cannot be created under ${ancestor}, which is required to install the agent: ${unwritable}`,
    };
  }
  let mount;
  try {
    mount = await mountFacts(ancestor);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      name,
      level: 'warning',
      message: `could not tell whether ${ancestor} is mounted noexec: ${why}`,
    };
  }
  if (mount.noexec) {
    return {
      name,
      level: 'error',
      message: `agent install directory ${dir} would be on ${mount.mountPoint}, which is mounted noexec, so the agent could not run from it; remount ${mount.mountPoint} without noexec`,
    };
  }
  return { name, level: 'ok', message: `${dir} can be created and run programs` };
}

/**
 * Why root could not create entries in `dir`, or undefined. The install runs
 * as root, so that is what is judged: run as root, access() answers; run by
 * another user (preflight changes nothing, so it needs no root), access()
 * would say EACCES for every root-owned directory, and only a read-only
 * mount stops root (docs/cli.md).
 */
async function whyRootCannotWrite(dir: string): Promise<string | undefined> {
  if (process.geteuid?.() !== 0) {
    // Unreadable mount facts: the noexec check below reads them again and warns.
    const mount = await mountFacts(dir).catch(() => undefined);
    return mount?.readOnly === true ? `${mount.mountPoint} is mounted read-only` : undefined;
  }
  try {
    await access(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * On a linked host, whether the move could take the agent's files into the
 * host root: a noexec parent keeps the host linked for good (the daemon skips
 * the move). A warning, not an error: the agent runs fine where it is.
 */
export async function checkMoveTarget(
  paths: HostRootPaths,
  markers: readonly string[],
): Promise<PreflightCheck | undefined> {
  const name = 'move-target';
  // Linked, or about to be (an earlier release's installation, not yet migrated).
  let staysAtLegacy: boolean;
  try {
    const planned = await plannedHostRoot(paths, markers);
    staysAtLegacy =
      (await hostRootState(paths)) !== 'moving' && planned === (await canonicalPath(paths.legacy));
  } catch {
    return undefined; // the install-dir check and migrate report an unreadable root
  }
  if (!staysAtLegacy) return undefined;
  // The parent may not exist yet: the daemon creates it when it moves.
  const parent = await nearestExisting(parentOf(paths));
  try {
    const mount = await mountFacts(parent);
    if (!mount.noexec) return undefined;
    return {
      name,
      level: 'warning',
      message: `${mount.mountPoint} is mounted noexec, so the agent's files stay in ${paths.legacy} and are not moved to ${paths.root}; remount ${mount.mountPoint} without noexec to let the daemon move them`,
    };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      name,
      level: 'warning',
      message: `could not tell whether ${parent} is mounted noexec: ${why}`,
    };
  }
}

/** `dir`, or its nearest ancestor that exists: what creating `dir` depends on. */
async function nearestExisting(dir: string): Promise<string> {
  let ancestor = dir;
  while (!(await exists(ancestor)) && path.dirname(ancestor) !== ancestor) {
    ancestor = path.dirname(ancestor);
  }
  return ancestor;
}
