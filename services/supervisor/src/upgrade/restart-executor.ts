import type { Logger } from '@aks-flex-node/log';
import { unitNames } from '@aks-flex-node/layout';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { runCommand, type CommandRunner } from '@aks-flex-node/systemd';

/** How the daemon gets itself restarted into what `current` names. */
export interface RestartExecutor {
  /** Asks for a restart of the agent unit shortly, so the caller can finish and release its lock first. */
  scheduleRestart(reason: string): Promise<void>;
  /** Starts the upgrade guard from the last-good binary, outside the agent unit. */
  startUpgradeGuard(lastGood: string, operationId: string): Promise<void>;
}

/**
 * The restart executor under systemd. A daemon that restarted itself
 * directly could have its own systemctl child killed before it recorded the
 * hand-off, so the restart is a transient timer unit that fires in a second;
 * `--collect` removes the unit even when it fails.
 */
export function createSystemdRestartExecutor(
  log: Logger,
  run: CommandRunner = runCommand,
): RestartExecutor {
  const systemdRun = async (args: string[], what: string) => {
    const result = await run('systemd-run', ['--quiet', '--collect', ...args], 30_000).catch(
      (error: unknown) => {
        throw new AgentError('SYSTEMD_FAILED', `${what}: ${messageOf(error)}`, { cause: error });
      },
    );
    if (result.exitCode !== 0) {
      throw new AgentError(
        'SYSTEMD_FAILED',
        `${what}: systemd-run exited ${result.exitCode}: ${result.stderr.trim()}`,
        {
          hint: 'see `journalctl -xe`',
        },
      );
    }
  };
  const stamp = () => `${Date.now()}${process.hrtime.bigint() % 1000n}`;
  return {
    scheduleRestart: async (reason) => {
      await systemdRun(
        [
          `--unit=aks-flex-node-agent-upgrade-restart-${stamp()}`,
          '--on-active=1s',
          'systemctl',
          'restart',
          unitNames.agent,
        ],
        'schedule the agent restart',
      );
      log.info({ reason }, 'scheduled a restart of the agent unit');
    },
    startUpgradeGuard: async (lastGood, operationId) => {
      await systemdRun(
        [
          `--unit=aks-flex-node-upgrade-guard-${stamp()}`,
          lastGood,
          'guard-agent-upgrade',
          '--operation',
          operationId,
        ],
        'start the upgrade guard',
      );
      log.info(
        { lastGood, operation: operationId },
        'started the upgrade guard from the last-good binary',
      );
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
    startUpgradeGuard: (lastGood, operationId) => {
      log.warn(
        { lastGood, operation: operationId },
        'not run by systemd: no upgrade guard; judging at the next start decides',
      );
      return Promise.resolve();
    },
  };
}
