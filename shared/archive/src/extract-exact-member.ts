import { randomBytes } from 'node:crypto';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError, mkdirMode, syncDirectory } from '@aks-flex-node/fs';
import {
  resolveExtractOptions,
  type ExtractExactMemberOptions,
  type ResolvedExtractOptions,
} from './extract-options.js';
import { readExactMember } from './read-exact-member.js';

/**
 * Installs the one member of a release `.tar.gz` at `targetPath` (spec
 * agentbinary §3.3, exact mode). The member streams into
 * `.agent-upgrade-<random>` beside the target, which is renamed over it only
 * after the whole archive was read and checked; on any failure the staged
 * file is removed, so an invalid archive never touches the target.
 * Throws INVALID_ARGUMENT (options), UPGRADE_REFUSED (archive),
 * UPGRADE_FAILED (unreadable archive) or HOST_ROOT_IO (target directory).
 */
export async function extractExactMember(
  archivePath: string,
  options: ExtractExactMemberOptions,
): Promise<void> {
  const rules = resolveExtractOptions(options);
  const dir = path.dirname(rules.targetPath);
  await mkdirMode(dir, 0o750);
  // Same directory as the target, so the rename is atomic and the file gets
  // the label the directory gives (SELinux); the dot keeps it out of globs.
  const staged = path.join(dir, `.agent-upgrade-${randomBytes(8).toString('hex')}`);
  try {
    await stageMember(archivePath, staged, rules);
    rules.onStaged?.();
    await renameOnto(staged, rules.targetPath);
  } catch (error) {
    // Best effort: the error being reported is the one that matters, and a
    // leftover dot-name is never looked up as a slot.
    await rm(staged, { force: true }).catch(() => undefined);
    throw error;
  }
  // The new name is durable only once its directory is synced; without this
  // a crash can bring back the old slot after a reported success.
  await syncDirectory(dir);
}

async function stageMember(
  archivePath: string,
  staged: string,
  rules: ResolvedExtractOptions,
): Promise<void> {
  let handle: FileHandle;
  try {
    // 'wx' is O_EXCL: a name planted at the staged path is never opened or followed.
    handle = await open(staged, 'wx', 0o600);
  } catch (error) {
    throw makeIoError('create', staged, error);
  }
  try {
    await readExactMember(archivePath, { handle, file: staged }, rules);
    // chmod on the handle: the mode is exact, not reduced by the umask.
    await handle.chmod(rules.mode).catch((error: unknown) => {
      throw makeIoError('set mode of', staged, error);
    });
    // fsync before the rename, or a crash could leave the target's name on an empty file.
    await handle.sync().catch((error: unknown) => {
      throw makeIoError('sync', staged, error);
    });
  } finally {
    await handle.close();
  }
}

async function renameOnto(staged: string, target: string): Promise<void> {
  try {
    await rename(staged, target);
  } catch (error) {
    throw makeIoError('rename', staged, error, { object: `onto ${target}` });
  }
}
