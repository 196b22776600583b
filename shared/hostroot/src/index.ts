/** The agent's host root: its states, migrate, prepare, resolve and removal. */
export { describeHostRoot, migrateAndDescribe } from './describe-host-root.js';
export type { HostRootPaths } from './host-root-paths.js';
export { hostRootState, hostRootStates } from './host-root-state.js';
export { isLegacyReleased } from './is-legacy-released.js';
export { migrateHostRoot } from './migrate-host-root.js';
export { plannedHostRoot } from './planned-host-root.js';
export { prepareHostRoot } from './prepare-host-root.js';
export { removeLegacySeed } from './remove-legacy-seed.js';
export { resolveHostRoot } from './resolve-host-root.js';
