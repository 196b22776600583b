import path from 'node:path';
import { tryFlock } from './flock.js';
import { heldLockRefusal } from './held-lock-refusal.js';
import { prepareRunDirectory } from './root-only.js';

/** A held single-instance guard. */
export interface SingleInstanceGuard {
  release(): Promise<void>;
}

/**
 * Makes sure only one daemon serves a socket path: a flock on `lockPath`, a
 * file in the root-only run directory. Only root can open it (the file is
 * 0600 and the directory 0750, both made root's at every start), so no local
 * user can hold the guard and keep the daemon from starting (an abstract
 * socket name, used before, had no permissions at all); and the kernel frees
 * a flock when its holder dies, so a crashed daemon leaves no stale guard.
 *
 * Throws DAEMON_RUNNING when another process holds it (naming it),
 * HOST_ROOT_IO when the run directory or the lock file cannot be made.
 */
export async function holdSingleInstance(
  lockPath: string,
  socketPath: string,
): Promise<SingleInstanceGuard> {
  await prepareRunDirectory(path.dirname(lockPath));
  const handle = await tryFlock(lockPath);
  if (handle === undefined) {
    throw await heldLockRefusal({
      code: 'DAEMON_RUNNING',
      lockPath,
      lead: `another aks-flex-node daemon already serves ${socketPath}`,
      hint: 'check it with `systemctl status aks-flex-node-agent`; stop it before starting another by hand',
    });
  }
  return { release: () => handle.release() };
}
