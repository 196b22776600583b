/** The agent's host root: its states, migrate, prepare, resolve, removal and the move. */
export { isUnder } from './at-or-under.js';
export { describeHostRoot, migrateAndDescribe } from './describe-host-root.js';
export type { HostRootPaths } from './host-root-paths.js';
export { guardLegacySeed } from './guard-legacy-seed.js';
export { hostRootState, hostRootStates } from './host-root-state.js';
export { isLegacyReleased } from './is-legacy-released.js';
export { isHostRootSettled, migrateHostRoot } from './migrate-host-root.js';
export { checkInstallDir, checkMoveTarget } from './check-install-dir.js';
export type { PreflightCheck } from './check-install-dir.js';
export { plannedHostRoot } from './planned-host-root.js';
export { prepareHostRoot } from './prepare-host-root.js';
export { refuseUnfinishedMove } from './refuse-unfinished-move.js';
export { removeHostRoot } from './remove-host-root.js';
export { removeLegacySeed } from './remove-legacy-seed.js';
export type { SeedRemoval } from './remove-legacy-seed.js';
export { resolveHostRoot } from './resolve-host-root.js';
export { loadRecordedDigests, recordDigest } from './move/digest-record.js';
export { systemMoveHost } from './move/move-host.js';
export type { DaemonMoveEffects, MountProbe, MoveHost } from './move/move-host.js';
export type { HostRootMovePaths } from './move/move-paths.js';
export { checkMoveReadiness } from './move/move-readiness.js';
export { removeLegacyLayout } from './move/remove-legacy-layout.js';
export type { MoveReadiness } from './move/move-readiness.js';
export type { MoveOptions } from './move/move-settings.js';
export {
  isHostRootMoveUnfinished,
  reconcileHostRootMove,
  reconcileMove,
} from './move/reconcile-move.js';
export type { MoveOutcome } from './move/reconcile-move.js';
