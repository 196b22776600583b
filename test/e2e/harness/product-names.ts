import path from 'node:path';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostPaths,
  lastGoodLinkFile,
  unitNames,
} from '@aks-flex-node/layout';

// The product's names as scenarios and diagnostics need them, taken from
// shared/layout, the one module that defines every on-disk name. The
// harness only renames them for the reader of a scenario.

/** The product's systemd units. */
export const productUnits = unitNames;

/** The product's paths a scenario checks or calls. */
export const productPaths = {
  /** Where `start` installs the executable operators call. */
  installedBinary: path.join(hostPaths.root, binaryFile),
  socket: hostPaths.socket,
  configDir: hostPaths.configDir,
  unitDir: hostPaths.unitDir,
  /** The blue/green slots and the links an AgentUpgrade switches and a rollback restores. */
  blueSlot: path.join(hostPaths.root, blueSlotFile),
  greenSlot: path.join(hostPaths.root, greenSlotFile),
  currentLink: path.join(hostPaths.root, currentLinkFile),
  lastGoodLink: path.join(hostPaths.root, lastGoodLinkFile),
  /** Present while an AgentUpgrade is pending; whoever judges it removes it. */
  signalFile: hostPaths.signalFile,
  /** One `<operation id>.json` per finished operation. */
  operationsDir: hostPaths.operationsDir,
} as const;

/** The units whose journals a failed scenario prints: the agent, its recovery and first boot. */
export const diagnosedUnits: readonly string[] = [
  unitNames.agent,
  unitNames.recovery,
  unitNames.upgradeGuard,
  unitNames.bootstrap,
];

/**
 * Directories the layout tree shows in full: the host root's parent (owned
 * by the host, so whatever else is there shows too), the legacy binaries
 * and the configuration.
 */
export const layoutRoots: readonly string[] = [
  hostPaths.parent,
  path.dirname(hostPaths.legacySeed),
  hostPaths.configDir,
];

/** Entries of the unit directory the layout tree shows, `*.wants` links included. */
export const unitGlob = 'aks-flex-node*';
