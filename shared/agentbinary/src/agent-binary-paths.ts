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

/**
 * The slot the next upgrade writes: always the one `current` does not
 * resolve to, so the running binary is never overwritten in place.
 */
export function candidateSlotFor(paths: AgentBinaryPaths, resolvedCurrent: string): string {
  return resolvedCurrent === paths.blue ? paths.green : paths.blue;
}

/** Whether a path is exactly one of the two slots (look-alike names do not count). */
export function isSlot(paths: AgentBinaryPaths, candidate: string | undefined): boolean {
  return candidate === paths.blue || candidate === paths.green;
}

/**
 * The names upgrades and activations give their temporary files. Only these
 * are ever swept: a slot, a link or an operator's file never matches them.
 */
export const temporaryNames = {
  /** A candidate staged beside its slot before the rename (stageAndSwitch). */
  stagedCandidatePrefix: '.aks-flex-node-candidate-',
  /** The archive library's partial member beside the slot (extractExactMember). */
  extractionTempPrefix: '.agent-upgrade-',
  /** A downloaded archive in the daemon's downloads directory (downloadArchive). */
  downloadedArchive: /^agent-upgrade-[0-9a-f]+\.tar\.gz$/,
  /** The CLI's private copy of a `--candidate` binary, a directory in the state directory. */
  activationSnapshot: /^host-agent-activation-[A-Za-z0-9]+$/,
} as const;

/** Whether a name in the slot directory is an upgrade's temporary file. */
export function isTemporarySlotName(name: string): boolean {
  return (
    name.startsWith(temporaryNames.stagedCandidatePrefix) ||
    name.startsWith(temporaryNames.extractionTempPrefix)
  );
}
