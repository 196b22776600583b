import { recoverAgentUpgrade, createHost } from '@aks-flex-node/agentbinary';
import { migrateHostRoot } from '@aks-flex-node/hostroot';
import { hostPaths, hostRootMarkers } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { createCommandLogger } from '../command-logger.js';
import { requireRoot } from '../require-root.js';
import { withLockWhenFree } from '../lock-when-free.js';
import { printLine } from '../output.js';
import { ownExecutable, recoveryLayout } from '../recovery-layout.js';
import { writeUnitsBeforeRestart } from '../units-before-restart.js';

/**
 * `aks-flex-node recover-agent-upgrade --message TEXT`: the recovery unit
 * runs this through the last-good binary when the upgraded daemon cannot
 * start. It records the failure and points `current` back at last-good,
 * under the activation lock; the shim then restarts the agent.
 */
export async function runRecoverAgentUpgrade(args: string[]): Promise<number> {
  const flags = parseCommandArgs('recover-agent-upgrade', args, { message: { type: 'string' } });
  // The message is what the failure record says; every caller (the recovery
  // shim, earlier releases' units) passes one, and a record without it says nothing.
  if (flags.message === undefined || flags.message.trim() === '') {
    throw new AgentError(
      'INVALID_ARGUMENT',
      'recover-agent-upgrade needs --message TEXT saying why the upgrade is being recovered',
      { hint: 'run `aks-flex-node recover-agent-upgrade --message "TEXT"`' },
    );
  }
  requireRoot('recover-agent-upgrade', 'it restores the last-good binary');
  const log = createCommandLogger('recover-agent-upgrade', { json: false });
  try {
    await migrateHostRoot(hostPaths, log, hostRootMarkers());
  } catch (error) {
    // Recovery must work whatever state the host root is in.
    log.warn({ err: error }, 'recovering the AgentUpgrade without migrating the host root');
  }
  const host = createHost({ log });
  const layout = await recoveryLayout(await ownExecutable(host));
  const result = await withLockWhenFree(log, 'an AgentUpgrade recovery', async () => {
    const recovered = await recoverAgentUpgrade(layout, hostPaths.signalFile, flags.message, log);
    // The shim restarts the agent next: under the units of the binary that
    // current now names (a Go one's own, this product's confined ones).
    await writeUnitsBeforeRestart(layout, host.systemctl, log);
    return recovered;
  });
  printLine(
    result.rolledBack
      ? `restored the last-good binary ${result.current ?? ''}`
      : 'no AgentUpgrade to recover',
  );
  // The links are what recovery restores; the machine's copy is retried by the daemon.
  if (result.machineCopy !== undefined) {
    printLine(
      `the machine ${result.machineCopy.machine}'s copy of the agent was not restored: ${result.machineCopy.error.message}`,
    );
    if (result.machineCopy.error.hint !== undefined)
      printLine(`to repair: ${result.machineCopy.error.hint}; the daemon then syncs it by itself`);
  }
  return 0;
}
