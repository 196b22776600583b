import { AgentError, type ErrorCode } from '@aks-flex-node/log';
import { describeLockHolders, findLockHolders } from './lock-holders.js';

/** What a refusal says besides who holds the lock. */
export interface HeldLockRefusal {
  code: Extract<ErrorCode, 'ACTIVATION_IN_PROGRESS' | 'DAEMON_RUNNING'>;
  lockPath: string;
  /** What cannot happen now, said first: "an upgrade cannot start now". */
  lead: string;
  /** The next step when the holder is one of root's processes, as it should be. */
  hint: string;
}

/**
 * The refusal for a flock another process holds. It names the holders from
 * /proc/locks (pid, command, user) rather than guessing who they are: the
 * Go releases, our own one-shots and an operator's `flock(1)` all look alike
 * from here. A holder that is not root's is named as such, with the command
 * that ends its hold: the lock file is root's alone (0600) from this
 * acquisition on, but a process that opened it while it was open to others
 * keeps its descriptor, and its lock, until it ends.
 */
export async function heldLockRefusal(refusal: HeldLockRefusal): Promise<AgentError> {
  const holders = await findLockHolders(refusal.lockPath);
  const strangers = holders.filter((holder) => holder.uid !== 0);
  const message = `${refusal.lead}: ${refusal.lockPath} is held by ${describeLockHolders(holders)}`;
  if (strangers.length === 0) {
    return new AgentError(refusal.code, message, { path: refusal.lockPath, hint: refusal.hint });
  }
  const pids = strangers.map((holder) => String(holder.pid)).join(' ');
  return new AgentError(
    refusal.code,
    `${message}; only root's processes may hold it: the file is root's alone (0600) now, but a process that opened it before it was tightened keeps it until it ends`,
    {
      path: refusal.lockPath,
      hint: `end that hold (\`kill ${pids}\`), then try again`,
    },
  );
}
