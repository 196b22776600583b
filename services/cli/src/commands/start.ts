import { convergeHostInstall } from '@aks-flex-node/agentbinary';
import { createApiClient, type StatusResponse } from '@aks-flex-node/api';
import { defaultAgentConfig, readAgentConfig, readConfigFile } from '@aks-flex-node/config';
import { exists, writeFileAtomic } from '@aks-flex-node/fs';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { pollUntil, withActivationLock } from '@aks-flex-node/lock';
import { AgentError, isAgentError, type Logger } from '@aks-flex-node/log';
import { createHost, type Host } from '@aks-flex-node/systemd';
import { parseCommandArgs } from '../args.js';
import { createCommandLogger } from '../command-logger.js';
import { requireRoot } from '../require-root.js';
import { printJson, printLine } from '../output.js';

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
  const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: 5_000 });
  const running = await statusIfAnswering(() => client.status());
  // A config named on the command line is checked even when there is nothing
  // else to do: the operator asked to use it, and must hear that it is bad.
  if (flags.config !== undefined) await readAgentConfig(flags.config);
  if (running !== undefined) {
    report(flags.json, running, 'the agent is already running; nothing to do');
    return 0;
  }
  // Progress goes to stderr (sentences on a terminal, JSON lines to the
  // journal or with --json), so --json keeps stdout to one object.
  const log = createCommandLogger('start', { json: flags.json });
  const host = createHost({ log });
  const { systemctl } = host;
  const executable = await host.runningExecutable();
  // No daemon answers, so this process is the one writer of the layout; the
  // lock keeps an offline reset or recovery from interleaving with it.
  await withActivationLock(
    {
      lockPath: hostPaths.activationLock,
      goLockPath: hostPaths.goUpgradeLock,
      log,
      purpose: 'the installation',
    },
    async () => {
      // Under the lock too: a refused start leaves even the config as it was.
      await installConfig(flags.config, log);
      await convergeHostInstall({ paths: hostPaths, log, executable, systemctl });
    },
  );
  const units = [unitNames.agentSocket, unitNames.agent];
  await systemctl.enable(units);
  await systemctl.start(units);
  log.info({ units }, 'started the agent');
  report(
    flags.json,
    await waitForDaemon(() => client.status(), 60_000, host),
    'the agent is installed and running',
  );
  return 0;
}

/** Copies the given config into place, or writes the default when the host has none. */
async function installConfig(source: string | undefined, log: Logger): Promise<void> {
  if (source === undefined) {
    if (await exists(hostPaths.configFile)) return;
    await writeFileAtomic(
      hostPaths.configFile,
      `${JSON.stringify(defaultAgentConfig, null, 2)}\n`,
      { mode: 0o600 },
    );
    log.info({ path: hostPaths.configFile }, 'wrote the default config');
    return;
  }
  await readAgentConfig(source); // refuse a bad config before anything on the host changes
  if (source === hostPaths.configFile) return;
  await writeFileAtomic(hostPaths.configFile, await readConfigFile(source), { mode: 0o600 });
  log.info({ path: hostPaths.configFile, from: source }, 'installed the config');
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

async function waitForDaemon(
  status: () => Promise<StatusResponse>,
  timeoutMs: number,
  host: Pick<Host, 'now' | 'sleep'>,
): Promise<StatusResponse> {
  return pollUntil(() => statusIfAnswering(status), {
    timeoutMs,
    intervalMs: 500,
    clock: host,
    timedOut: () => {
      throw new AgentError(
        'DAEMON_UNREACHABLE',
        `the agent was started but did not answer on ${hostPaths.socket} within ${timeoutMs / 1000}s`,
        {
          path: hostPaths.socket,
          hint: 'see why with `systemctl status aks-flex-node-agent` and `journalctl -u aks-flex-node-agent`',
        },
      );
    },
  });
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
