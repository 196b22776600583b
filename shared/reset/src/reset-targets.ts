import path from 'node:path';
import {
  localDnsNetworkFile,
  nspawnLifecycleFile,
  recoveryScriptFile,
  unitNames,
  wireguardKeyFiles,
  type HostPaths,
} from '@aks-flex-node/layout';

/** The units reset removes after the agent is stopped; the first-boot unit goes earlier, on its own. */
export const resetUnits: readonly string[] = [
  unitNames.agent,
  unitNames.agentSocket,
  unitNames.recovery,
  unitNames.upgradeGuard,
  unitNames.localDnsNetwork,
];

/**
 * Every file reset removes, under BOTH roots whatever the host root's state:
 * a host linked, moved or half-moved has had these under either, and reset
 * must not depend on a migration having happened (spec daemon 8.1). Only
 * helpers and the recovery script: the agent binaries and their blue/green
 * layout are kept for a later rejoin. Call it only after the agent is
 * stopped, so no move can change which root holds what (spec daemon 8.4).
 */
export function resetTargets(paths: HostPaths): string[] {
  const roots = paths.root === paths.legacy ? [paths.root] : [paths.root, paths.legacy];
  const helpers = roots.flatMap((root) =>
    [recoveryScriptFile, nspawnLifecycleFile, localDnsNetworkFile].map((file) =>
      path.join(root, file),
    ),
  );
  return [
    ...resetUnits.map((unit) => path.join(paths.unitDir, unit)),
    ...helpers,
    // Upgrade state: with the units gone no daemon judges a pending upgrade,
    // and a stale signal would make the next install's daemon roll it back.
    paths.signalFile,
    // Digests of daemons that ran on a linked host: a rejoin starts a new record.
    paths.hostRootAgentDigests,
    // unbounded-net's WireGuard keys (spec daemon 8.1, "network"): a rejoin makes new ones.
    ...wireguardKeyFiles.map((file) => path.join(paths.wireguardDir, file)),
  ];
}
