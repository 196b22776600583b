import type { HostRootResponse } from '@aks-flex-node/api';
import { retryWhileStarting } from '../retry-while-starting.js';
import { createApiClient } from '@aks-flex-node/api';
import { describeHostRoot, migrateAndDescribe } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import { AgentError, createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { requireRoot } from '../require-root.js';
import { printJson, printLine } from '../output.js';

/**
 * `aks-flex-node host-root [--resolved | --planned] [--json] [--migrate]`.
 * The plain form prints the planned root, one bare path on one line and
 * nothing else, as the Go releases' does (spec daemon 7.1): their install
 * scripts and upgrade guard run it to learn whether a release knows the host
 * root and compare its output with a path, so it must not change. On a
 * legacy host not yet linked the planned root differs from the resolved one
 * (`--resolved`).
 */
export async function runHostRoot(args: string[]): Promise<number> {
  const flags = parseCommandArgs('host-root', args, {
    planned: { type: 'boolean', default: false },
    resolved: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    migrate: { type: 'boolean', default: false },
  });
  if (flags.migrate && flags.planned) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      'host-root: --planned shows where the files would go and --migrate moves them; give one',
      { hint: 'run `aks-flex-node host-root --planned`, or `aks-flex-node host-root --migrate`' },
    );
  }
  const report = flags.migrate ? await migrate() : await describeHostRoot(hostPaths);
  if (flags.json) printJson(report);
  // After a migration the interesting answer is where the files are now.
  else printLine(flags.resolved || flags.migrate ? report.resolved : report.planned);
  return 0;
}

/**
 * Asks the daemon, the only writer of the layout while it runs. Only when no
 * daemon answers does this process migrate, under the same activation lock.
 */
async function migrate(): Promise<HostRootResponse> {
  requireRoot('host-root --migrate', "it links or moves the agent's files");
  try {
    const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: 30_000 });
    return (await retryWhileStarting(() => client.migrateHostRoot())).after;
  } catch (error) {
    if (!isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
  }
  const log = createSilentLogger();
  const result = await withActivationLock(
    {
      lockPath: hostPaths.activationLock,
      goLockPath: hostPaths.goUpgradeLock,
      log,
      purpose: 'a host-root migration',
    },
    () => migrateAndDescribe(hostPaths, log),
  );
  return result.after;
}
