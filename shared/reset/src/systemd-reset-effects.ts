import { stat } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError, pollUntil, type PollClock } from '@aks-flex-node/fs';
import { queuedRestartUnitPrefix, spacedRestartUnitPrefix, unitNames } from '@aks-flex-node/layout';
import { AgentError, isNotFound, messageOf, type Logger } from '@aks-flex-node/log';
import { createSystemctl, runCommand, type CommandRunner } from '@aks-flex-node/systemd';
import { isNotInstalled } from './ip-network-effects.js';
import type { ResetEffects } from './reset-effects.js';

/**
 * The real {@link ResetEffects}: every call is one systemctl command through
 * the Systemctl wrapper, and a failure names the command and what systemctl
 * said, with reset's own next step.
 */
export function createSystemdResetEffects(
  log: Logger,
  run: CommandRunner = runCommand,
  clock?: PollClock,
): ResetEffects {
  const systemctl = createSystemctl({ log, run, timeoutMs: 90_000 });
  const withResetHint = async <T>(call: Promise<T>): Promise<T> => {
    try {
      return await call;
    } catch (error) {
      throw new AgentError('SYSTEMD_FAILED', messageOf(error), {
        cause: error,
        hint: 'see `journalctl -xe` for what systemd reported, then run `aks-flex-node reset` again',
      });
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
      await withResetHint(systemctl.stopIfLoaded(patterns));
      const jobs = await withResetHint(systemctl.listJobs());
      for (const id of agentJobIds(jobs)) {
        log.info({ job: id, unit: unitNames.agent }, 'cancelling a queued job of the agent unit');
        // A job that ran meanwhile is gone; that is the outcome wanted.
        await withResetHint(systemctl.cancelJob(id));
      }
    },
    disableNow: (unit) => withResetHint(systemctl.disableNow(unit)),
    disable: (units) => withResetHint(systemctl.disable(units)),
    stop: (units) => withResetHint(systemctl.stopIfLoaded(units)),
    daemonReload: () => withResetHint(systemctl.daemonReload()),
    terminateMachine: (machine) => terminateMachine(machine, run, log, clock),
  };
}

/** How long a terminated machine has to leave machined's list. */
const machineGoneTimeoutMs = 30_000;

async function terminateMachine(
  machine: string,
  run: CommandRunner,
  log: Logger,
  clock: PollClock | undefined,
): Promise<boolean> {
  const failed = (detail: string, cause?: unknown) =>
    new AgentError('SYSTEMD_FAILED', `terminate nspawn machine ${machine}: ${detail}`, {
      path: machine,
      ...(cause === undefined ? {} : { cause }),
      hint: `stop it with \`machinectl terminate ${machine}\` (\`machinectl list\` shows what runs it), then run \`aks-flex-node reset\` again`,
    });
  // Known to machined: `show` exits 0 only for a registered machine.
  const known = async (): Promise<boolean> =>
    (await run('machinectl', ['show', '--property=Name', '--value', machine], 10_000)).exitCode ===
    0;
  try {
    if (!(await known())) return false;
  } catch (error) {
    if (isNotInstalled(error)) return false;
    throw failed(`machinectl show: ${messageOf(error)}`, error);
  }
  log.warn(
    { machine },
    'the machine runs outside its systemd-nspawn@ unit; terminating it before its files go',
  );
  const result = await run('machinectl', ['terminate', machine], 30_000);
  // A machine that ended meanwhile is not known any more: that is the outcome wanted.
  if (result.exitCode !== 0 && (await known())) {
    throw failed(`machinectl terminate exited ${result.exitCode}: ${result.stderr.trim()}`);
  }
  return pollUntil(async () => ((await known()) ? undefined : true), {
    timeoutMs: machineGoneTimeoutMs,
    intervalMs: 200,
    ...(clock === undefined ? {} : { clock }),
    timedOut: () => {
      throw failed(`still running ${machineGoneTimeoutMs / 1000} s after machinectl terminate`);
    },
  });
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
