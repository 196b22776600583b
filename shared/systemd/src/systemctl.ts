import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { CommandResult, CommandRunner } from '@aks-flex-node/fs';

/** systemctl's exit status for "unit not loaded" (LSB "program is not installed"). */
const notLoadedStatus = 5;

/** Options for {@link createSystemctl}. */
export interface SystemctlOptions {
  log: Pick<Logger, 'debug'>;
  /**
   * runCommand (execa) in the daemon and the cold roles, runBuiltin in the
   * hot ones; named by the caller, so a hot bundle that uses systemctl holds
   * no execa.
   */
  run: CommandRunner;
  timeoutMs?: number;
}

/** The systemctl calls the product makes; tests pass a fake. */
export interface Systemctl {
  daemonReload(): Promise<void>;
  enable(units: readonly string[]): Promise<void>;
  start(units: readonly string[]): Promise<void>;
  stop(units: readonly string[]): Promise<void>;
  /** `reset-failed` first so a planned restart never counts toward the start limit. */
  resetFailed(unit: string): Promise<void>;
  restartNoBlock(unit: string): Promise<void>;
  /** Stops units (or patterns); one that is not loaded is not an error. */
  stopIfLoaded(units: readonly string[]): Promise<void>;
  /** Queues the stop and returns: for a process that stops its own unit. */
  stopNoBlock(units: readonly string[]): Promise<void>;
  disable(units: readonly string[]): Promise<void>;
  disableNow(unit: string): Promise<void>;
  /** `list-jobs --no-legend --plain`, as systemctl prints it. */
  listJobs(): Promise<string>;
  /** Cancels a queued job; one that ran meanwhile is gone, which is not an error. */
  cancelJob(id: string): Promise<void>;
  /** `show -p NAME...`: the `NAME=value` lines. */
  show(unit: string, properties: readonly string[]): Promise<string>;
  /** Restarts and waits for the job: for a caller that checks the result itself. */
  restart(unit: string): Promise<void>;
  isActive(unit: string): Promise<boolean>;
  /** LoadState, ActiveState and SubState, as `systemctl show` reports them. */
  unitState(unit: string): Promise<{ loadState: string; activeState: string; subState: string }>;
  /** The unit's main process, 0 when it has none. */
  mainPid(unit: string): Promise<number>;
}

/** Builds the real {@link Systemctl}; every call goes through one runner. Throws SYSTEMD_FAILED. */
export function createSystemctl(options: SystemctlOptions): Systemctl {
  const { run } = options;
  const timeoutMs = options.timeoutMs ?? 90_000;
  const systemctl = async (args: string[]): Promise<CommandResult> => {
    options.log.debug({ args }, 'running systemctl');
    try {
      return await run('systemctl', args, timeoutMs);
    } catch (error) {
      throw new AgentError('SYSTEMD_FAILED', `systemctl ${args.join(' ')}: ${messageOf(error)}`, {
        cause: error,
      });
    }
  };
  const mustSucceed = async (args: string[], ok: readonly number[] = [0]): Promise<string> => {
    const result = await systemctl(args);
    if (!ok.includes(result.exitCode)) {
      throw new AgentError(
        'SYSTEMD_FAILED',
        `systemctl ${args.join(' ')} exited ${result.exitCode}: ${result.stderr.trim()}`,
        {
          hint: 'see `journalctl -xe` for what systemd reported',
        },
      );
    }
    return result.stdout;
  };
  const done = async (args: string[], ok?: readonly number[]): Promise<void> => {
    await mustSucceed(args, ok);
  };
  return {
    daemonReload: () => done(['daemon-reload']),
    enable: (units) => done(['enable', ...units]),
    start: (units) => done(['start', ...units]),
    stop: (units) => done(['stop', ...units]),
    resetFailed: (unit) => done(['reset-failed', unit]),
    restartNoBlock: (unit) => done(['--no-block', 'restart', unit]),
    restart: (unit) => done(['restart', unit]),
    stopIfLoaded: (units) => done(['stop', ...units], [0, notLoadedStatus]),
    stopNoBlock: (units) => done(['--no-block', 'stop', ...units]),
    disable: (units) => done(['disable', ...units]),
    disableNow: (unit) => done(['disable', '--now', unit]),
    // Read whatever it printed: a listing it could not make holds no job to cancel.
    listJobs: async () => (await systemctl(['list-jobs', '--no-legend', '--plain'])).stdout,
    cancelJob: (id) => done(['cancel', id], [0, 1]),
    show: (unit, properties) =>
      mustSucceed(['show', ...properties.flatMap((property) => ['-p', property]), unit]),
    isActive: async (unit) => (await systemctl(['is-active', '--quiet', unit])).exitCode === 0,
    unitState: async (unit) => {
      const result = await systemctl(['show', '--property=LoadState,ActiveState,SubState', unit]);
      const value = (key: string) =>
        new RegExp(`^${key}=(.*)$`, 'm').exec(result.stdout)?.[1]?.trim() ?? '';
      return {
        loadState: value('LoadState'),
        activeState: value('ActiveState'),
        subState: value('SubState'),
      };
    },
    mainPid: async (unit) => {
      const args = ['show', '--property=MainPID', '--value', unit];
      const result = await systemctl(args);
      const pid = Number(result.stdout.trim());
      if (result.exitCode !== 0 || !Number.isInteger(pid) || pid < 0) {
        throw new AgentError(
          'SYSTEMD_FAILED',
          `systemctl ${args.join(' ')} exited ${result.exitCode} with ${JSON.stringify(result.stdout.trim())}: ${result.stderr.trim()}`,
          { hint: 'see `journalctl -xe` for what systemd reported' },
        );
      }
      return pid;
    },
  };
}
