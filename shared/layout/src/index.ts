export {
  agentOnlyDirs,
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostLayoutFiles,
  hostRootMarkers,
  hostRootSubdirs,
  lastGoodLinkFile,
  localDnsNetworkFile,
  managedBinaryDir,
  movingMarkerName,
  nspawnLifecycleFile,
  nspawnMachines,
  recoveryScriptFile,
  stagingSuffix,
} from './names.js';
export {
  agentUnits,
  hostPaths,
  hostPathsUnder,
  nspawnUnitNames,
  queuedRestartUnitPrefix,
  spacedRestartUnitPrefix,
  stopAgentCommand,
  unitNames,
} from './paths.js';
export type { HostPaths } from './paths.js';
export type { NspawnMachine } from './names.js';
