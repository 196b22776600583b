import {
  candidateSlotFor,
  resolveIfPresent,
  type AgentBinaryPaths,
} from '@aks-flex-node/agentbinary';
import { AgentError } from '@aks-flex-node/log';

/**
 * The daemon never writes the slot its own process executes. The candidate
 * goes to the slot `current` does not name, which is normally not the running
 * one; but after `current` moved back without a restart yet (a judged
 * failure, a recovery), it is, and replacing it would leave this process
 * running a file no link names while a rollback starts something else.
 *
 * Throws UPGRADE_REFUSED.
 */
export async function refuseRunningSlot(
  layout: AgentBinaryPaths,
  runningExecutable: string,
): Promise<void> {
  const current = await resolveIfPresent(layout.current);
  if (current === undefined) return;
  const slot = candidateSlotFor(layout, current);
  if ((await resolveIfPresent(slot)) !== runningExecutable) return;
  throw new AgentError(
    'UPGRADE_REFUSED',
    `the candidate slot ${slot} is the binary this daemon runs; it is not overwritten`,
    {
      path: slot,
      hint: 'restart the agent (systemctl restart aks-flex-node-agent) so it runs what current names, then retry',
    },
  );
}
