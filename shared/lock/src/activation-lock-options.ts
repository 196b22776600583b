import type { Logger } from '@aks-flex-node/log';

/** Options for {@link acquireActivationLock}. */
export interface ActivationLockOptions {
  /** The lock's path; production uses `hostPaths.activationLock`. */
  lockPath: string;
  /**
   * The Go releases' flock, taken second; production uses
   * `hostPaths.goUpgradeLock`. Required, so no holder can forget it.
   */
  goLockPath: string;
  log: Logger;
  /** What the caller is about to do, for the refusal message and the log. */
  purpose: string;
  /**
   * After how long a lock whose holder stopped refreshing it counts as
   * abandoned (a killed process). proper-lockfile's minimum is 2000 ms.
   */
  staleMs?: number;
}
