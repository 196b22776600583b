import type { VersionInfo } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { parseCommandArgs } from '../args.js';
import { requireRoot } from '../require-root.js';
import { versionInfo } from '../build-info.js';

/** The supervisor's entry, handed in by the dispatcher (the one place the CLI reaches a service). */
export type StartSupervisor = (options: {
  configPath: string;
  version: VersionInfo;
}) => Promise<number>;

/**
 * `aks-flex-node agent --config PATH` (also `daemon`): the supervisor, as the
 * agent unit runs it. Earlier releases' units run exactly this command line.
 * It parses the flags and hands over; the supervisor builds everything else.
 */
export async function runAgent(args: string[], startSupervisor: StartSupervisor): Promise<number> {
  const flags = parseCommandArgs('agent', args, {
    config: { type: 'string', default: hostPaths.configFile },
  });
  requireRoot('agent', "the daemon owns the agent's files, units and socket");
  return startSupervisor({ configPath: flags.config, version: versionInfo() });
}
