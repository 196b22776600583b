import type { HostRootResponse } from '@aks-flex-node/api';
import { retryWhileStarting } from '../retry-while-starting.js';
import { createApiClient } from '@aks-flex-node/api';
import { describeHostRoot, migrateAndDescribe } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { printJson, printLine } from '../output.js';

/**
 * `aks-flex-node host-root [--planned] [--json] [--migrate]`. Earlier
 * releases' scripts run the plain form to learn where the agent's files are,
 * so its output stays one path on one line.
 */
export async function runHostRoot(args: string[]): Promise<number> {
  const flags = parseCommandArgs('host-root', args, {
    planned: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    migrate: { type: 'boolean', default: false },
  });
  const report = flags.migrate ? await migrate() : await describeHostRoot(hostPaths);
  if (flags.json) printJson(report);
  else printLine(flags.planned ? report.planned : report.resolved);
  return 0;
}

/**
 * Asks the daemon, the only writer of the layout while it runs. Only when no
 * daemon answers does this process migrate, under the same activation lock.
 */
async function migrate(): Promise<HostRootResponse> {
  try {
    const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: 30_000 });
    return (await retryWhileStarting(() => client.migrateHostRoot())).after;
  } catch (error) {
    if (!isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
  }
  const log = createSilentLogger();
  const result = await withActivationLock(
    { lockPath: hostPaths.activationLock, log, purpose: 'a host-root migration' },
    () => migrateAndDescribe(hostPaths, log),
  );
  return result.after;
}
