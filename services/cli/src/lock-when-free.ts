import { hostPaths } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import { isAgentError, type Logger } from '@aks-flex-node/log';

/**
 * Takes the activation lock for a one-shot that must happen (recovery, the
 * upgrade guard), waiting for it up to `timeoutMs`: a daemon killed while
 * holding it leaves it until it goes stale (10 s), and giving up then would
 * leave the host on a broken candidate.
 */
export async function withLockWhenFree<T>(
  log: Logger,
  purpose: string,
  work: () => Promise<T>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await withActivationLock({ lockPath: hostPaths.activationLock, log, purpose }, work);
    } catch (error) {
      if (!isAgentError(error, 'ACTIVATION_IN_PROGRESS') || Date.now() > deadline) throw error;
      log.info({ purpose }, 'the activation lock is busy; trying again shortly');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
