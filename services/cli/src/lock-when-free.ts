import { hostPaths } from '@aks-flex-node/layout';
import { retryWhileActivationBusy, withActivationLock } from '@aks-flex-node/lock';
import type { Logger } from '@aks-flex-node/log';

/**
 * Takes the activation lock for a one-shot that must happen (recovery, the
 * upgrade guard), waiting for it up to `timeoutMs`: a daemon killed while
 * holding it leaves it until it goes stale (10 s).
 */
export function withLockWhenFree<T>(
  log: Logger,
  purpose: string,
  work: () => Promise<T>,
  timeoutMs = 20_000,
): Promise<T> {
  return retryWhileActivationBusy(
    () =>
      withActivationLock(
        {
          lockPath: hostPaths.activationLock,
          goLockPath: hostPaths.goUpgradeLock,
          log,
          purpose,
        },
        work,
      ),
    { log, purpose, timeoutMs, intervalMs: 500 },
  );
}
