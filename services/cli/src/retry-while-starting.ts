import { daemonStartingReason } from '@aks-flex-node/api';
import { pollUntil } from '@aks-flex-node/lock';
import { isAgentError } from '@aks-flex-node/log';

/**
 * Sends a change to the daemon, and sends it again while the daemon refuses
 * it only because it is still starting (its gate opens seconds after it
 * answers): `agent-upgrade` right after `start` or a restart then just works.
 * Any other refusal, including a daemon held for replacement, comes back at
 * once; the starting refusal itself once `timeoutMs` has passed.
 */
export async function retryWhileStarting<T>(
  change: () => Promise<T>,
  timeoutMs = 60_000,
  intervalMs = 500,
): Promise<T> {
  let refusal: unknown;
  const done = await pollUntil(
    async () => {
      try {
        return { value: await change() };
      } catch (error) {
        const starting =
          isAgentError(error, 'DAEMON_NOT_READY') && error.message.includes(daemonStartingReason);
        if (!starting) throw error;
        refusal = error;
        return undefined;
      }
    },
    {
      timeoutMs,
      intervalMs,
      timedOut: () => {
        throw refusal;
      },
    },
  );
  return done.value;
}
