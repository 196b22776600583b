export { activateCandidate } from './activation/activate-candidate.js';
export { preflightCandidate } from './activation/preflight-candidate.js';
export {
  createCandidateFetcher,
  hostCandidateTrust,
  maxCandidateBytes,
  openTrustedCandidate,
  parseUpgradeSource,
  precheckUpgradeSource,
} from './upgrade/candidate-source.js';
export type {
  CandidateFetcher,
  CandidateTrust,
  FetchEvents,
  TrustedCandidate,
  UpgradeSource,
} from './upgrade/candidate-source.js';
export { snapshotCandidate } from './activation/snapshot-candidate.js';
export { agentBinaryPathsUnder } from './agent-binary-paths.js';
export { createHost } from './host.js';
export type { Host } from './host.js';
export type { AgentBinaryPaths } from './agent-binary-paths.js';
export { convergeHostInstall } from './install/converge-host-install.js';
export type { ConvergedInstall } from './install/converge-host-install.js';
export type { ExecutableCopy } from './install-host-binary.js';
export {
  defaultServiceOptions,
  fillTemplate,
  readInstalledServiceOptions,
  renderServiceAssets,
  serviceAssetsAreWritten,
  serviceAssetsForHost,
  writeServiceAssets,
  type LegacyRootUse,
  releaseKindsOf,
  writeUnitsForBinaries,
} from './install/service-assets.js';
export { releaseKindOf } from './install/release-kind.js';
export { productOnlyUnits, retireProductOnlyUnits } from './install/retire-product-units.js';
export type { RetireSystemctl } from './install/retire-product-units.js';
export type { ReleaseKind, ReleaseKinds } from './install/release-kind.js';
export type { ServiceAsset, ServiceOptions } from './install/service-assets.js';
export {
  findActiveMachine,
  machineCopyRepair,
  nspawnCopyMatches,
  nspawnCopyPath,
  syncNspawnCopy,
} from './nspawn/nspawn-copy.js';
export type { NspawnCopySync } from './nspawn/nspawn-copy.js';
export { resolveIfPresent } from './resolve-link.js';
export { readUpgradeSignal, readUpgradeSignalState } from './upgrade/upgrade-state.js';
export type { UpgradeSignalState } from './upgrade/upgrade-state.js';
export { readSettledSignal } from './upgrade/upgrade-state.js';
export type { CorruptSignalSetAside } from './upgrade/upgrade-state.js';
export { describeAgentLink, inspectAgentLink } from './agent-link.js';
export type { AgentLinkState } from './agent-link.js';
export { convergeCurrentLink } from './upgrade/converge-current.js';
export type { CurrentConvergence } from './upgrade/converge-current.js';
export { candidateSlotFor } from './agent-binary-paths.js';
export { inspectCandidate } from './upgrade/stage-and-switch.js';
export { daemonInstanceId } from './upgrade/upgrade-state.js';
export { judgeStartedUpgrade } from './upgrade/judge-started-upgrade.js';
export type { JudgeOutcome } from './upgrade/judge-started-upgrade.js';
export { resultFrom as upgradeResultFromSignal } from './upgrade/judge-started-upgrade.js';
export {
  listOperationRecords,
  readOperationRecord,
  writeOperationRecord,
} from './upgrade/operation-records.js';
export type { OperationRecords } from './upgrade/operation-records.js';
export { recoverAgentUpgrade } from './upgrade/recover-agent-upgrade.js';
export type { MachineCopyFailure, RollbackResult } from './upgrade/stage-and-switch.js';
export { refusePendingUpgrade } from './upgrade/upgrade-state.js';
export {
  mayHaveSwitched,
  readUpgradeState,
  settleUpgradeState,
  upgradeStateOf,
} from './upgrade/upgrade-state.js';
export type { ReadUpgradeState, UpgradeState } from './upgrade/upgrade-state.js';
export { stageAndSwitch } from './upgrade/stage-and-switch.js';
export { snapshotGraceMs, sweepUpgradeLeftovers } from './upgrade/sweep-leftovers.js';
export type { LeftoverPlaces } from './upgrade/sweep-leftovers.js';
export type {
  StageOptions,
  StagePhase,
  StagePort,
  StageResult,
} from './upgrade/stage-and-switch.js';
