import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { tryFlock } from './flock.js';
import { AgentError, messageOf } from '@aks-flex-node/log';

/** A held single-instance guard. */
export interface SingleInstanceGuard {
  release(): Promise<void>;
}

/**
 * Makes sure only one daemon serves a socket path: a flock on `lockPath`, a
 * file in the root-only run directory. Only root can open it, so no local
 * user can hold the guard and keep the daemon from starting (an abstract
 * socket name, used before, had no permissions at all); and the kernel frees
 * a flock when its holder dies, so a crashed daemon leaves no stale guard.
 *
 * Throws DAEMON_RUNNING when another daemon holds it, HOST_ROOT_IO when the
 * run directory or the lock file cannot be made.
 */
export async function holdSingleInstance(
  lockPath: string,
  socketPath: string,
): Promise<SingleInstanceGuard> {
  const runDir = path.dirname(lockPath);
  // 0750 as the socket unit's DirectoryMode: the directory is root's alone.
  await mkdir(runDir, { recursive: true, mode: 0o750 }).catch((error: unknown) => {
    throw new AgentError('HOST_ROOT_IO', `create ${runDir}: ${messageOf(error)}`, {
      path: runDir,
      cause: error,
    });
  });
  const handle = await tryFlock(lockPath);
  if (handle === undefined) {
    throw new AgentError(
      'DAEMON_RUNNING',
      `another aks-flex-node daemon already serves ${socketPath}`,
      {
        path: lockPath,
        hint: 'check it with `systemctl status aks-flex-node-agent`; stop it before starting another by hand',
      },
    );
  }
  return { release: () => handle.release() };
}
