import path from 'node:path';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostPaths,
  lastGoodLinkFile,
  managedBinaryDir,
  recoveryScriptFile,
} from '@aks-flex-node/layout';

/** The blue/green layout's absolute paths under one resolved root. */
export interface AgentBinaryPaths {
  readonly root: string;
  /** The compatibility entry point: a link to `current`, or a plain file on older hosts. */
  readonly binary: string;
  readonly slotDir: string;
  readonly blue: string;
  readonly green: string;
  readonly current: string;
  readonly lastGood: string;
  readonly recoveryScript: string;
  /**
   * Where the Go releases' nspawn machines live (`<dir>/kube1`, `<dir>/kube2`);
   * each keeps a copy of the host binary that upgrades and rollbacks keep in sync.
   */
  readonly machinesDir: string;
}

/**
 * Builds the layout's paths under a root. Pass the *resolved* root: link
 * targets are compared after resolution, and on a linked host the root
 * resolves to the legacy root where earlier releases wrote them.
 */
export function agentBinaryPathsUnder(
  resolvedRoot: string,
  machinesDir = hostPaths.machinesDir,
): AgentBinaryPaths {
  const at = (relative: string) => path.join(resolvedRoot, relative);
  return {
    root: resolvedRoot,
    binary: at(binaryFile),
    slotDir: at(managedBinaryDir),
    blue: at(blueSlotFile),
    green: at(greenSlotFile),
    current: at(currentLinkFile),
    lastGood: at(lastGoodLinkFile),
    recoveryScript: at(recoveryScriptFile),
    machinesDir,
  };
}
