import {
  writeUnitsForBinaries,
  type AgentBinaryPaths,
  type RetireSystemctl,
} from '@aks-flex-node/agentbinary';
import { hostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';

/**
 * Before a command restarts the agent into what `current` names now (the
 * guard's rollback, the recovery shim's restart after recover-agent-upgrade):
 * the units of the binaries the links name, so a Go last-good runs under its
 * own release's units and this product under its confined ones. Only when run
 * by systemd (INVOCATION_ID, as the daemon decides it owns the units): run by
 * hand, the units are left to the next daemon start.
 */
export async function writeUnitsBeforeRestart(
  layout: AgentBinaryPaths,
  systemctl: RetireSystemctl,
  log: Logger,
): Promise<void> {
  if (process.env.INVOCATION_ID === undefined) return;
  await writeUnitsForBinaries(hostPaths, layout, systemctl, log);
}
