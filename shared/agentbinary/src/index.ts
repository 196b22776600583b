export { activateHostDaemon } from './activation/activate-host-daemon.js';
export type { ActivateOptions } from './activation/activate-host-daemon.js';
export { createFileInspector } from './activation/activation-inspector.js';
export type {
  ActivationInspector,
  EntryKind,
  FileInspector,
} from './activation/activation-inspector.js';
export type { ActivationService } from './activation/activation-service.js';
export { planActivation } from './activation/plan-activation.js';
export type { ActivationLayout, PlanRequest } from './activation/plan-activation.js';
export { maxCandidateBytes, snapshotCandidate } from './activation/snapshot-candidate.js';
export type { CandidateSnapshot } from './activation/snapshot-candidate.js';
export { agentBinaryPathsUnder } from './agent-binary-paths.js';
export type { AgentBinaryPaths } from './agent-binary-paths.js';
export { ensureAgentBinaryLayout, isRegularExecutable } from './ensure-layout.js';
export type { LayoutResult } from './ensure-layout.js';
export { installHostBinary } from './install-host-binary.js';
export type { InstallHostBinaryOptions } from './install-host-binary.js';
export { resolveIfPresent } from './resolve-link.js';
export {
  clearUpgradeSignal,
  readUpgradeSignal,
  updateUpgradeSignal,
  writeUpgradeSignal,
} from './signal/upgrade-signal-file.js';
export { candidateSlotFor, isSlot } from './upgrade/candidate-slot.js';
export { daemonInstanceId } from './upgrade/instance-id.js';
export { judgeStartedUpgrade } from './upgrade/judge-started-upgrade.js';
export type { JudgeOptions, JudgeOutcome } from './upgrade/judge-started-upgrade.js';
export {
  isValidOperationId,
  readOperationRecord,
  writeOperationRecord,
} from './upgrade/operation-records.js';
export { defaultRecoveryMessage, recoverAgentUpgrade } from './upgrade/recover-agent-upgrade.js';
export { rollbackUpgradeFiles } from './upgrade/rollback-files.js';
export type { RollbackResult } from './upgrade/rollback-files.js';
export { stageAndSwitch } from './upgrade/stage-and-switch.js';
export { snapshotGraceMs, sweepUpgradeLeftovers } from './upgrade/sweep-leftovers.js';
export type { LeftoverPlaces } from './upgrade/sweep-leftovers.js';
export type { StageOptions, StagePhase, StageResult } from './upgrade/stage-and-switch.js';
