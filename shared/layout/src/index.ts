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
  recoveryScriptFile,
  stagingSuffix,
} from './names.js';
export { hostPaths, hostPathsUnder, queuedRestartUnitPrefix, unitNames } from './paths.js';
export type { HostPaths } from './paths.js';
