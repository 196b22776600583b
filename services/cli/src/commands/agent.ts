import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { readAgentConfig } from '@aks-flex-node/config';
import { hostPaths } from '@aks-flex-node/layout';
import { createLogger } from '@aks-flex-node/log';
import {
  combineUpgradeSources,
  convergeHostInstall,
  createReleaseArchives,
  createStagedBinaries,
  createHostRootService,
  runDaemon,
  waitForStopSignal,
} from '@aks-flex-node/supervisor';
import { createSystemctl } from '@aks-flex-node/systemd';
import { parseCommandArgs } from '../args.js';
import { requireRoot } from '../require-root.js';
import { versionInfo } from '../build-info.js';

/**
 * `aks-flex-node agent --config PATH` (also `daemon`): the supervisor, as the
 * agent unit runs it. Earlier releases' units run exactly this command line.
 */
export async function runAgent(args: string[]): Promise<number> {
  const flags = parseCommandArgs('agent', args, {
    config: { type: 'string', default: hostPaths.configFile },
  });
  requireRoot('agent', "the daemon owns the agent's files, units and socket");
  const stopSignal = waitForStopSignal();
  const config = await readAgentConfig(flags.config);
  const log = createLogger({
    level: config.agent?.logLevel ?? 'info',
    bindings: { role: 'agent' },
  });
  // systemd sets INVOCATION_ID for the processes of a unit. Only then does the
  // daemon own the units; started by hand (tests, debugging) it only serves.
  const managedBySystemd = process.env.INVOCATION_ID !== undefined;
  const systemctl = managedBySystemd ? createSystemctl({ log }) : undefined;
  const executable = await realpath(process.execPath);
  return runDaemon({
    paths: hostPaths,
    log,
    version: versionInfo(),
    hostRoot: createHostRootService(hostPaths, log),
    archives: combineUpgradeSources(
      // Archives are large: they go to the daemon's own state directory, not a tmpfs /tmp.
      createReleaseArchives(path.join(hostPaths.stateDir, 'downloads')),
      createStagedBinaries(),
    ),
    managedBySystemd,
    prepareHost: async () => {
      await convergeHostInstall({
        paths: hostPaths,
        log,
        executable,
        ...(systemctl === undefined ? {} : { systemctl }),
      });
    },
    stopSignal,
  });
}
