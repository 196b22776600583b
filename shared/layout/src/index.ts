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
  configLastGoodFor,
  hostPaths,
  hostPathsUnder,
  nspawnMachineFiles,
  nspawnUnitNames,
  queuedRestartUnitPrefix,
  regenerateConfigTemplate,
  spacedRestartUnitPrefix,
  stopAgentCommand,
  unitNames,
} from './paths.js';
export type { HostPaths, NspawnMachineFiles } from './paths.js';
export {
  isWireguardInterface,
  legacyBridgeCni,
  localDns,
  overlayInterfaces,
  wireguardKeyFiles,
  wireguardRange,
} from './node-network.js';
export type { NftTable } from './node-network.js';
export { latestReleaseUrl, reinstallCommand } from './reinstall-command.js';
export { layoutFilePlaces, temporaryFilePlaces } from './temporary-file-places.js';
export type { TemporaryFilePlace } from './temporary-file-places.js';
export type { NspawnMachine } from './names.js';
