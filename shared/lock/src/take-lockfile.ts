import fs from 'node:fs';
import { lstat, rm } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { AgentError, errnoCode, messageOf } from '@aks-flex-node/log';
import type { ActivationLockOptions } from './activation-lock-options.js';

/**
 * The file system proper-lockfile works through, with one change: the lock
 * directory it makes is root's alone (0700, the directory form of a 0600
 * lock file) rather than 0755, so nothing in it is ever open to others.
 */
const rootOnlyFs = {
  ...fs,
  mkdir: (dir: string, callback: (error: NodeJS.ErrnoException | null) => void) => {
    fs.mkdir(dir, { mode: 0o700 }, callback);
  },
};

/**
 * Takes proper-lockfile's lock (a directory whose mtime its holder keeps
 * fresh) without waiting. Throws ACTIVATION_IN_PROGRESS when held,
 * HOST_ROOT_IO when it cannot be made.
 */
export async function takeLockfile(options: ActivationLockOptions): Promise<() => Promise<void>> {
  try {
    return await lockOnce(options);
  } catch (error) {
    if (errnoCode(error) !== 'ELOCKED') throw lockIoError(options.lockPath, error);
    if (!(await removeStrangersLock(options))) throw lockRefusal(options, error);
    return lockOnce(options).catch((again: unknown) => {
      throw lockRefusal(options, again);
    });
  }
}

async function lockOnce(options: ActivationLockOptions): Promise<() => Promise<void>> {
  // Set before the release starts: proper-lockfile (4.1.2) refreshes the
  // lock's mtime on a timer, and a refresh whose stat is in flight when the
  // lock is released finds the directory gone and reports the lock
  // compromised, although nothing took it. A CI run lost a healthy upgrade
  // to that: the daemon exited 1 right after its switch, and the guard read
  // the exit as the candidate's crash and rolled back.
  let releasing = false;
  const release = await lockfile.lock(path.dirname(options.lockPath), {
    lockfilePath: options.lockPath,
    realpath: false,
    retries: 0,
    stale: options.staleMs ?? 10_000,
    fs: rootOnlyFs,
    onCompromised: (error) => {
      if (releasing) {
        options.log.warn(
          { err: error, path: options.lockPath },
          'the activation lock refresh ran into its own release; nothing to do',
        );
        return;
      }
      // The lock was taken from us (its directory removed or its mtime left stale
      // while the event loop stalled). Carrying on could let two activations
      // interleave, so the process stops here; systemd restarts the daemon.
      options.log.fatal({ err: error, path: options.lockPath }, 'the activation lock was lost');
      process.exit(1);
    },
  });
  return () => {
    releasing = true;
    return release();
  };
}

/**
 * Only root's processes take this lock, so a lock directory another user
 * owns was made while the run directory was open to others, and is nobody's
 * activation: it is removed, not waited for. The run directory is root's
 * alone by now (prepareRunDirectory), so its maker cannot make it again.
 */
async function removeStrangersLock(options: ActivationLockOptions): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  const info = await lstat(options.lockPath).catch(() => undefined);
  if (info === undefined || info.uid === 0) return false;
  options.log.warn(
    { path: options.lockPath, uid: info.uid },
    'removing an activation lock that another user made; only root takes this lock',
  );
  await rm(options.lockPath, { recursive: true, force: true }).catch((error: unknown) => {
    throw lockIoError(options.lockPath, error);
  });
  return true;
}

/** ACTIVATION_IN_PROGRESS for a held lock, HOST_ROOT_IO for anything else. */
function lockRefusal(options: ActivationLockOptions, error: unknown): AgentError {
  if (errnoCode(error) !== 'ELOCKED') return lockIoError(options.lockPath, error);
  return new AgentError(
    'ACTIVATION_IN_PROGRESS',
    `${options.purpose} cannot start now: another process holds the activation lock ${options.lockPath} (an upgrade, a host-root move, a reset or a recovery)`,
    {
      path: options.lockPath,
      hint: 'wait for the running upgrade, move or reset to finish (see `aks-flex-node status`), then try again',
      cause: error,
    },
  );
}

function lockIoError(lockPath: string, error: unknown): AgentError {
  return new AgentError('HOST_ROOT_IO', `take ${lockPath}: ${messageOf(error)}`, {
    path: lockPath,
    cause: error,
  });
}
