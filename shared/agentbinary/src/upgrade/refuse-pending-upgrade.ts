import { AgentError } from '@aks-flex-node/log';
import { readUpgradeSignal } from '../signal/upgrade-signal-file.js';

/**
 * Refuses a new AgentUpgrade while the signal records one that has not been
 * judged. The caller holds the activation lock and keeps it until the new
 * upgrade has written its own signal, so no other upgrade can slip in between
 * the check and the write. Throws ACTIVATION_IN_PROGRESS.
 */
export async function refusePendingUpgrade(signalFile: string): Promise<void> {
  const pending = await readUpgradeSignal(signalFile);
  if (pending === undefined) return;
  throw new AgentError(
    'ACTIVATION_IN_PROGRESS',
    `an AgentUpgrade is already pending (${pending.operationName}); ${signalFile} records it`,
    {
      path: signalFile,
      hint: 'wait for it to finish (see `aks-flex-node status`), then try again',
    },
  );
}
