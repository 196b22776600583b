import type { HostRootResponse } from '@aks-flex-node/api';
import { createApiClient } from '@aks-flex-node/api';
import { migrateAndDescribe } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { printJson, printLine } from '../output.js';
import { requireRoot } from '../require-root.js';
import { retryWhileStarting } from '../retry-while-starting.js';
import { parseHostRootFlags } from './host-root-flags.js';

/** `aks-flex-node host-root --migrate [--json]` (see host-root.ts). */
export async function runHostRootMigrate(args: string[]): Promise<number> {
  const flags = parseHostRootFlags(args);
  const report = await migrate();
  if (flags.json) printJson(report);
  // After a migration the interesting answer is where the files are now.
  else printLine(report.resolved);
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
