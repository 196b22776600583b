import { AgentError, type Logger } from '@aks-flex-node/log';
import { spacedRestartUnitPrefix, unitNames } from '@aks-flex-node/layout';
import { createSystemctl, runCommand, type CommandRunner } from '@aks-flex-node/systemd';
import {
  monotonicMs,
  parseStartLimit,
  plannedRestartDelayMs,
  readAgentStarts,
  shippedStartLimit,
  type StartLimit,
} from './start-limit.js';

/** How the daemon gets itself restarted into what `current` names. */
export interface RestartExecutor {
  /** Asks for a restart of the agent unit shortly, so the caller can finish and release its lock first. */
  scheduleRestart(reason: string): Promise<void>;
  /** Milliseconds until the last restart asked for fires (0: at once, or none asked for). */
  pendingDelayMs(): number;
}

/** Where the systemd executor learns how many starts systemd has counted. */
export interface StartLimitSources {
  /** The record of this unit's daemon starts (paths.agentStarts). */
  startsFile: string;
  /** CLOCK_MONOTONIC in ms; injectable for tests. */
  now?: () => number;
}

/**
 * Writes the units of the binaries the links name (writeUnitsForBinaries),
 * before each restart: the next daemon may be another release (a Go
 * candidate, a Go last-good after a rollback, a downgrade), which must start
 * under its own release's units, never under this product's confinement.
 */
export type BeforeRestart = () => Promise<unknown>;

/**
 * The restart executor under systemd: `reset-failed` on the agent unit, then
 * a non-blocking restart. The reset comes first because a planned restart
 * still counts toward the start limit, and right after a burst of upgrades it
 * could be the start systemd refuses (from v255 a daemon-reload no longer
 * clears the counter). The restart only enqueues the job: systemd then stops
 * this daemon, whose hand-off is already durable, and with KillMode=mixed it
 * finishes this call before the rest of its cgroup is stopped.
 *
 * Where `reset-failed` is refused (Azure Container Linux's SELinux policy,
 * upstream #385) nothing clears the counter, and a refused start would leave
 * the agent stopped (OnFailure's recovery does nothing without a pending
 * upgrade). Then the restart is spaced instead: counting the starts the
 * daemons recorded, it is queued on a transient timer once enough have left
 * the unit's StartLimitIntervalSec that it and one crash restart still fit.
 */
export function createSystemdRestartExecutor(
  log: Logger,
  run: CommandRunner = runCommand,
  sources?: StartLimitSources,
  beforeRestart?: BeforeRestart,
): RestartExecutor {
  const systemctl = createSystemctl({ log, run, timeoutMs: 30_000 });
  const now = sources?.now ?? monotonicMs;
  let firesAt = 0;
  const startLimit = async (): Promise<StartLimit> => {
    const shown = await systemctl
      .show(unitNames.agent, ['StartLimitIntervalUSec', 'StartLimitBurst'])
      .catch(() => undefined);
    return (shown === undefined ? undefined : parseStartLimit(shown)) ?? shippedStartLimit;
  };
  const spacing = async (): Promise<number> => {
    if (sources === undefined) return 0;
    const starts = await readAgentStarts(sources.startsFile).catch((error: unknown) => {
      log.warn({ err: error }, 'could not read the record of agent starts; assuming a full window');
      return Array.from({ length: shippedStartLimit.burst }, () => now());
    });
    return plannedRestartDelayMs(starts, now(), await startLimit());
  };
  return {
    pendingDelayMs: () => Math.max(0, firesAt - now()),
    scheduleRestart: async (reason) => {
      await beforeRestart?.().catch((error: unknown) => {
        // Restarting anyway: a daemon left running what current no longer
        // names would wedge the upgrade, which is worse than the next one
        // starting under units it did not write (its own start rewrites them).
        log.error(
          { err: error },
          'could not write the units of the binary the agent restarts into; restarting under the units as they are',
        );
      });
      const cleared = await systemctl.resetFailed(unitNames.agent).then(
        () => true,
        (error: unknown) => {
          log.warn(
            { err: error },
            'could not reset the agent unit failure counter; spacing the restart to stay inside its start limit',
          );
          return false;
        },
      );
      const delayMs = cleared ? 0 : await spacing();
      if (delayMs === 0) {
        await systemctl.restartNoBlock(unitNames.agent);
        firesAt = now();
        log.info({ reason }, 'queued a restart of the agent unit');
        return;
      }
      const seconds = Math.ceil(delayMs / 1000);
      const result = await run(
        'systemd-run',
        [
          '--quiet',
          '--collect',
          `--unit=${spacedRestartUnitPrefix}${Date.now()}`,
          `--on-active=${seconds}s`,
          '/usr/bin/systemctl',
          'restart',
          unitNames.agent,
        ],
        30_000,
      );
      if (result.exitCode !== 0) {
        throw new AgentError(
          'SYSTEMD_FAILED',
          `could not queue the agent's restart in ${seconds}s: systemd-run exited ${result.exitCode}: ${result.stderr.trim()}`,
          {
            hint: 'restart it yourself with `systemctl restart aks-flex-node-agent` once `systemctl status` shows no start limit hit',
          },
        );
      }
      firesAt = now() + seconds * 1000;
      log.warn(
        { reason, delaySeconds: seconds },
        'queued a restart of the agent unit, spaced to stay inside its start limit',
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
    pendingDelayMs: () => 0,
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
