import { stat } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError } from '@aks-flex-node/fs';
import { queuedRestartUnitPrefix, spacedRestartUnitPrefix, unitNames } from '@aks-flex-node/layout';
import { AgentError, isNotFound, messageOf, type Logger } from '@aks-flex-node/log';
import { runCommand, type CommandResult, type CommandRunner } from '@aks-flex-node/systemd';
import type { ResetEffects } from './reset-effects.js';

/** systemctl's exit status for "unit not loaded" (LSB "program is not installed"). */
const notLoadedStatus = 5;

/**
 * The real {@link ResetEffects}: every call is one systemctl command through the
 * shared runner, and a failure names the command and what systemctl said.
 */
export function createSystemdResetEffects(
  log: Logger,
  run: CommandRunner = runCommand,
): ResetEffects {
  const systemctl = async (args: readonly string[]): Promise<CommandResult> => {
    log.debug({ args }, 'running systemctl');
    try {
      return await run('systemctl', args, 90_000);
    } catch (error) {
      throw new AgentError('SYSTEMD_FAILED', `systemctl ${args.join(' ')}: ${messageOf(error)}`, {
        cause: error,
        hint: 'see `journalctl -xe` for what systemd reported, then run `aks-flex-node reset` again',
      });
    }
  };
  const mustSucceed = async (args: readonly string[], ok: readonly number[] = [0]) => {
    const result = await systemctl(args);
    if (!ok.includes(result.exitCode)) {
      throw new AgentError(
        'SYSTEMD_FAILED',
        `systemctl ${args.join(' ')} exited ${result.exitCode}: ${result.stderr.trim()}`,
        {
          hint: 'see `journalctl -xe` for what systemd reported, then run `aks-flex-node reset` again',
        },
      );
    }
  };
  return {
    cancelQueuedRestarts: async () => {
      // Patterns match loaded units only, so a host with none queued stops
      // nothing. The Go releases' restart after a move's first pass, and this
      // product's restart spaced to stay inside the start limit.
      const patterns = [queuedRestartUnitPrefix, spacedRestartUnitPrefix].flatMap((prefix) => [
        `${prefix}*.timer`,
        `${prefix}*.service`,
      ]);
      await mustSucceed(['stop', ...patterns], [0, notLoadedStatus]);
      const jobs = await systemctl(['list-jobs', '--no-legend', '--plain']);
      for (const id of agentJobIds(jobs.stdout)) {
        log.info({ job: id, unit: unitNames.agent }, 'cancelling a queued job of the agent unit');
        // A job that ran meanwhile is gone; that is the outcome wanted.
        await mustSucceed(['cancel', id], [0, 1]);
      }
    },
    disableNow: (unit) => mustSucceed(['disable', '--now', unit]),
    disable: (units) => mustSucceed(['disable', ...units]),
    stop: (units) => mustSucceed(['stop', ...units], [0, notLoadedStatus]),
    daemonReload: () => mustSucceed(['daemon-reload']),
  };
}

/** The ids of queued jobs of the agent unit in `systemctl list-jobs --no-legend --plain` output. */
export function agentJobIds(listing: string): string[] {
  return listing
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([id, unit]) => id !== undefined && /^\d+$/.test(id) && unit === unitNames.agent)
    .map(([id]) => id ?? '');
}

/**
 * Whether systemd runs this host (sd_booted(3): `/run/systemd/system` exists
 * under the prefix). Without it there is no unit to stop and every systemctl
 * call would fail, so reset only removes files.
 */
export async function isSystemdBooted(prefix: string): Promise<boolean> {
  const marker = path.join(prefix, 'run/systemd/system');
  try {
    return (await stat(marker)).isDirectory();
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', marker, error);
  }
}
