import { convergeHostInstall, createHost, type Host } from '@aks-flex-node/agentbinary';
import { createApiClient, type StatusResponse } from '@aks-flex-node/api';
import {
  defaultAgentConfig,
  describeUnknownConfigKey,
  findUnknownConfigKeys,
  readAgentConfig,
  readConfigFile,
  readConfigJson,
} from '@aks-flex-node/config';
import { exists, pollUntil, writeFileAtomic } from '@aks-flex-node/fs';
import { agentUnits, hostPaths, unitNames, type HostPaths } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import { AgentError, errnoCode, isAgentError, type Logger } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { createCommandLogger } from '../command-logger.js';
import { requireRoot } from '../require-root.js';
import { printJson, printLine } from '../output.js';
import {
  failingUnitError,
  isFailing,
  lastAgentError,
  watchAgentUnit,
  type AgentUnitState,
} from './agent-unit-watch.js';
import { noteStartLeftovers } from './start-leftovers.js';

/**
 * `aks-flex-node start [--config PATH] [--json]` (also `bootstrap`): installs
 * the running binary as the agent and starts it under systemd. Idempotent: on
 * a host where the daemon already answers it only reports its status.
 */
export async function runStart(args: string[]): Promise<number> {
  const flags = parseCommandArgs('start', args, {
    config: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  requireRoot('start', 'it writes /opt/unbounded/agent, /etc and systemd units');
  // Each ask ends early once the agent unit shows it failing (a crash loop
  // leaves the socket accepting and nothing answering).
  const askStatus = () => {
    const failing = new AbortController();
    const stopWatch = watchAgentUnit((error) => {
      failing.abort(error);
    });
    return createApiClient({
      socketPath: hostPaths.socket,
      timeoutMs: 5_000,
      signal: failing.signal,
    })
      .status()
      .finally(stopWatch);
  };
  // Progress goes to stderr (sentences on a terminal, JSON lines to the
  // journal or with --json), so --json keeps stdout to one object.
  const log = createCommandLogger('start', { json: flags.json });
  const outcome = await startAgent(flags.config, {
    paths: hostPaths,
    log,
    host: createHost({ log }),
    status: askStatus,
  });
  report(flags.json, outcome.status, outcome.sentence);
  return 0;
}

/** What {@link startAgent} needs: the real host in `runStart`, fakes in tests. */
export interface StartDeps {
  paths: HostPaths;
  log: Logger;
  host: Pick<Host, 'systemctl' | 'runningExecutable' | 'now' | 'sleep'>;
  /** The daemon's status; throws DAEMON_UNREACHABLE while none answers. */
  status: () => Promise<StatusResponse>;
  /** How long the started agent has to answer (60 s). */
  answerTimeoutMs?: number;
  /** The agent's last error in the journal; by default {@link lastAgentError}. */
  lastAgentError?: () => Promise<string | undefined>;
}

/** What `start` reports: the daemon's status and one sentence. */
export interface StartOutcome {
  status: StatusResponse;
  sentence: string;
}

/**
 * The twin of {@link runStart} over the given paths and host: reports a
 * daemon that answers; otherwise installs the config and the running binary
 * under the activation lock, enables and starts the agent's units, and waits
 * for it to answer. Throws what the config check, the lock, the install or
 * systemctl throw, and DAEMON_UNREACHABLE when the agent never answers.
 */
export async function startAgent(
  configPath: string | undefined,
  deps: StartDeps,
): Promise<StartOutcome> {
  const { paths, log, host } = deps;
  const running = await statusIfAnswering(deps.status);
  // A config named on the command line is checked even when there is nothing
  // else to do: the operator asked to use it, and must hear that it is bad.
  if (configPath !== undefined) await readGivenConfig(configPath, paths, log);
  if (running !== undefined) {
    // This build, under an earlier release's plain unit (its install script
    // ran it from /usr/local/bin), is stopped first, so this process is again
    // the one writer of the layout, then installed and started as on a
    // fresh host. Its socket answers again once the started unit does.
    if (!(await stopAgentWithoutSocket(deps))) {
      if (configPath !== undefined && (await configDiffers(configPath, paths))) {
        return applyConfigToRunningAgent(configPath, deps);
      }
      return { status: running, sentence: 'the agent is already running; nothing to do' };
    }
  }
  // An agent that exits at every start with the installed config would do
  // so again: say why now (a start would first wait out its restart delay).
  if (configPath === undefined) {
    const unit = await host.systemctl.unitState(unitNames.agent);
    if (isFailing(unit)) {
      const broken = await installedConfigFailure(paths);
      if (broken !== undefined) throw broken;
    }
  }
  const executable = await host.runningExecutable();
  // No daemon answers, so this process is the one writer of the layout; the
  // lock keeps an offline reset or recovery from interleaving with it.
  await withActivationLock(
    {
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'the installation',
    },
    async () => {
      // Noted under the lock, so no other writer's files are counted as this run's.
      const leftovers = await noteStartLeftovers(paths);
      try {
        // Under the lock too: a refused start leaves even the config as it was.
        await installConfig(paths, log, configPath);
        await convergeHostInstall({ paths, log, executable, systemctl: host.systemctl });
      } catch (error) {
        // A half install (a full /opt) would make every retry skip the seed
        // and fail the same way: what this run created goes, the rest stays.
        await leftovers.removeCreated(log).catch((cleanupError: unknown) => {
          log.error(
            { err: cleanupError },
            'could not remove what the failed start created; remove it before starting again',
          );
        });
        throw error;
      }
    },
  );
  await host.systemctl.enable(agentUnits);
  // An earlier release's daemon under its plain unit: the convergence has
  // rewritten that unit, but systemd runs the old process until it stops,
  // and refuses to start a socket whose service is already active. Stopped
  // right before the start, so the gap without an agent is its stop plus
  // the new daemon's start, nothing else.
  await stopAgentWithoutSocket(deps);
  await host.systemctl.start(agentUnits);
  log.info({ units: agentUnits }, 'started the agent');
  const status = await waitForDaemon(deps, deps.answerTimeoutMs ?? 60_000);
  return { status, sentence: 'the agent is installed and running' };
}

/**
 * Stops the agent's service when it runs while its socket does not: what an
 * earlier release's plain unit (no socket) leaves running. On a host this
 * product installed, both are active, or both are not. Whether it stopped it.
 */
async function stopAgentWithoutSocket(deps: StartDeps): Promise<boolean> {
  const { systemctl } = deps.host;
  const [service, socket] = await Promise.all([
    systemctl.isActive(unitNames.agent),
    systemctl.isActive(unitNames.agentSocket),
  ]);
  if (!service || socket) return false;
  deps.log.info(
    { unit: unitNames.agent },
    "stopping the agent that an earlier release's unit runs without its socket, to start it under the socket",
  );
  await systemctl.stop([unitNames.agent]);
  return true;
}

/** Copies the given config into place, or writes the default when the host has none. */
async function installConfig(
  paths: HostPaths,
  log: Logger,
  source: string | undefined,
): Promise<void> {
  if (source === undefined) {
    if (await exists(paths.configFile)) return;
    await writeFileAtomic(paths.configFile, `${JSON.stringify(defaultAgentConfig, null, 2)}\n`, {
      mode: 0o600,
    });
    log.info({ path: paths.configFile }, 'wrote the default config');
    return;
  }
  await readAgentConfig(source); // refuse a bad config before anything on the host changes
  if (source === paths.configFile) return;
  await writeFileAtomic(paths.configFile, await readConfigFile(source), { mode: 0o600 });
  log.info({ path: paths.configFile, from: source }, 'installed the config');
}

/** Whether the given config's bytes differ from the installed config's (or none is installed). */
async function configDiffers(source: string, paths: HostPaths): Promise<boolean> {
  if (source === paths.configFile) return false;
  if (!(await exists(paths.configFile))) return true;
  return (await readConfigFile(source)) !== (await readConfigFile(paths.configFile));
}

/**
 * `start --config NEW` while the agent runs with another config: the
 * operator asked for NEW, so it is installed (under the activation lock, so
 * no upgrade or reset is under way) and the agent restarted to read it; the
 * daemon reads its config only at its start. The socket stays open
 * meanwhile, so clients wait for the new daemon rather than fail.
 */
async function applyConfigToRunningAgent(
  configPath: string,
  deps: StartDeps,
): Promise<StartOutcome> {
  const { paths, log, host } = deps;
  await withActivationLock(
    {
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'installing the new config',
    },
    () => installConfig(paths, log, configPath),
  );
  await host.systemctl.restart(unitNames.agent);
  log.info(
    { unit: unitNames.agent, config: configPath },
    'restarted the agent with the new config',
  );
  const status = await waitForDaemon(deps, deps.answerTimeoutMs ?? 60_000);
  return { status, sentence: `the agent is running with the config from ${configPath}` };
}

/**
 * The config named by --config, checked. A missing one gets its own hint:
 * the config reader's ("install the agent with start") is for the installed
 * config, and running this same start again would fail the same way.
 */
async function readGivenConfig(configPath: string, paths: HostPaths, log: Logger): Promise<void> {
  try {
    await readAgentConfig(configPath);
  } catch (error) {
    if (isAgentError(error, 'INVALID_CONFIG') && errnoCode(error.cause) === 'ENOENT') {
      throw new AgentError('INVALID_CONFIG', error.message, {
        path: configPath,
        cause: error,
        hint: `check the path given to --config, or leave --config out to keep ${paths.configFile} (a default one is written when there is none)`,
      });
    }
    throw error;
  }
  // A typo'd key would be ignored by every release: the operator hears so, and the key stays.
  for (const unknown of findUnknownConfigKeys(await readConfigJson(configPath))) {
    log.warn(
      { path: configPath, key: unknown.key, closest: unknown.closest },
      describeUnknownConfigKey(configPath, unknown),
    );
  }
}

async function statusIfAnswering(
  status: () => Promise<StatusResponse>,
): Promise<StatusResponse | undefined> {
  try {
    return await status();
  } catch (error) {
    if (isAgentError(error, 'DAEMON_UNREACHABLE')) return undefined;
    throw error;
  }
}

async function waitForDaemon(deps: StartDeps, timeoutMs: number): Promise<StatusResponse> {
  const { socket } = deps.paths;
  const poll = async (): Promise<StatusResponse | undefined> => {
    // A daemon that exits at start (a broken config) never answers: once
    // systemd shows the unit failing, say why instead of waiting it out.
    const unit = await deps.host.systemctl.unitState(unitNames.agent);
    if (isFailing(unit)) throw await whyAgentFails(deps, unit);
    return statusIfAnswering(deps.status);
  };
  return pollUntil(poll, {
    timeoutMs,
    intervalMs: 500,
    clock: deps.host,
    timedOut: () => {
      throw new AgentError(
        'DAEMON_UNREACHABLE',
        `the agent was started but did not answer on ${socket} within ${timeoutMs / 1000}s`,
        {
          path: socket,
          hint: 'see why with `systemctl status aks-flex-node-agent` and `journalctl -u aks-flex-node-agent`',
        },
      );
    },
  });
}

/**
 * Why the started agent fails: the installed config, validated here as the
 * daemon validates it (the first thing it reads, and the usual cause), or
 * else the unit's state and the agent's last error from the journal.
 */
async function whyAgentFails(deps: StartDeps, unit: AgentUnitState): Promise<AgentError> {
  return (
    (await installedConfigFailure(deps.paths)) ??
    failingUnitError(unit, await (deps.lastAgentError ?? lastAgentError)())
  );
}

/** The installed config's fault, as an error saying the agent exits on it; undefined when valid. */
async function installedConfigFailure(paths: HostPaths): Promise<AgentError | undefined> {
  const { configFile } = paths;
  // None installed: start writes the default one.
  if (!(await exists(configFile))) return undefined;
  try {
    await readAgentConfig(configFile);
    return undefined;
  } catch (error) {
    if (!isAgentError(error, 'INVALID_CONFIG')) throw error;
    return new AgentError(
      'INVALID_CONFIG',
      `the agent exits at start, so it never answers: ${error.message}`,
      {
        path: configFile,
        cause: error,
        hint: `correct the fields named above in ${configFile}; the agent retries every 30 s, or run \`systemctl restart ${unitNames.agent}\``,
      },
    );
  }
}

function report(json: boolean, status: StatusResponse, sentence: string): void {
  if (json) {
    printJson(status);
    return;
  }
  printLine(sentence);
  printLine(
    `version ${status.version.version}, pid ${status.daemon.pid}, files at ${status.hostRoot.resolved}`,
  );
}
