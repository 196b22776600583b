import { daemonStartingReason } from '@aks-flex-node/api';
import { pollUntil, type PollClock } from '@aks-flex-node/fs';
import { isAgentError } from '@aks-flex-node/log';

/** How long {@link retryWhileStarting} waits, and whom it tells while it does. */
export interface RetryWhileStartingOptions {
  /** The whole wait; a command's `--timeout` when it has one. Default 60 s. */
  timeoutMs?: number;
  intervalMs?: number;
  /**
   * Told the daemon's reason each time it changes, so a caller never waits
   * in silence: the reason says what the start does (judging the upgrade it
   * names, setting a corrupt signal aside, retrying). It starts at "the
   * daemon is starting": the refusal's leading API route (`POST
   * /v1/agent-upgrades refused: `) means nothing to an operator at a terminal.
   */
  onWaiting?: (reason: string) => void;
  /** The clock the wait reads; tests pass one that moves only when it waits. */
  clock?: PollClock;
}

/**
 * Sends a change to the daemon, and sends it again while the daemon refuses
 * it only because it is still starting (its gate opens seconds after it
 * answers): `agent-upgrade` right after `start` or a restart then just works.
 * Any other refusal, including a daemon held for replacement, comes back at
 * once; the starting refusal itself once `timeoutMs` has passed.
 */
export async function retryWhileStarting<T>(
  change: () => Promise<T>,
  options: RetryWhileStartingOptions = {},
): Promise<T> {
  let refusal: unknown;
  let told: string | undefined;
  const done = await pollUntil(
    async () => {
      try {
        return { value: await change() };
      } catch (error) {
        const starting =
          isAgentError(error, 'DAEMON_NOT_READY') && error.message.includes(daemonStartingReason);
        if (!starting) throw error;
        refusal = error;
        if (error.message !== told) {
          told = error.message;
          options.onWaiting?.(error.message.slice(error.message.indexOf(daemonStartingReason)));
        }
        return undefined;
      }
    },
    {
      timeoutMs: options.timeoutMs ?? 60_000,
      intervalMs: options.intervalMs ?? 500,
      timedOut: () => {
        throw refusal;
      },
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    },
  );
  return done.value;
}
