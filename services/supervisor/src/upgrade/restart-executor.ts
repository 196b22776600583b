import type { Logger } from '@aks-flex-node/log';
import { unitNames } from '@aks-flex-node/layout';
import { createSystemctl, runCommand, type CommandRunner } from '@aks-flex-node/systemd';

/** How the daemon gets itself restarted into what `current` names. */
export interface RestartExecutor {
  /** Asks for a restart of the agent unit shortly, so the caller can finish and release its lock first. */
  scheduleRestart(reason: string): Promise<void>;
}

/**
 * The restart executor under systemd: `reset-failed` on the agent unit, then
 * a non-blocking restart. The reset comes first because a planned restart
 * still counts toward the start limit, and right after a burst of upgrades it
 * could be the start systemd refuses (from v255 a daemon-reload no longer
 * clears the counter); it is best effort, as SELinux may deny it. The restart
 * only enqueues the job: systemd then stops this daemon, whose hand-off (the
 * committed switch in the signal) is already durable, and with KillMode=mixed
 * it finishes this call before the rest of its cgroup is stopped.
 */
export function createSystemdRestartExecutor(
  log: Logger,
  run: CommandRunner = runCommand,
): RestartExecutor {
  const systemctl = createSystemctl({ log, run, timeoutMs: 30_000 });
  return {
    scheduleRestart: async (reason) => {
      await systemctl.resetFailed(unitNames.agent).catch((error: unknown) => {
        log.warn(
          { err: error },
          'could not reset the agent unit failure counter; restarting anyway',
        );
      });
      await systemctl.restartNoBlock(unitNames.agent);
      log.info({ reason }, 'queued a restart of the agent unit');
    },
  };
}

/**
 * The restart executor for a daemon started by hand (no systemd): it stops
 * this process, and whoever started it starts it again from `current`, as
 * the namespace suites do. There is no guard without systemd.
 */
export function createSelfExitRestartExecutor(
  log: Logger,
  requestStop: (reason: string) => void,
): RestartExecutor {
  return {
    scheduleRestart: (reason) => {
      log.warn(
        { reason },
        'not run by systemd: stopping so the caller restarts the daemon from the current link',
      );
      // Deferred so the request that asked for the restart is answered first.
      setTimeout(() => {
        requestStop(reason);
      }, 200);
      return Promise.resolve();
    },
  };
}
