export { buildApp, bodyLimitBytes } from './app.js';
export type { BuildAppOptions } from './app.js';
export type { HostRootService, SupervisorDeps } from './deps.js';
export { renderServiceAssets, writeServiceAssets } from './install/service-assets.js';
export type { ServiceAsset } from './install/service-assets.js';
export { createMutationQueue } from './mutation-queue.js';
export type { MutationQueue } from './mutation-queue.js';
export { runDaemon, waitForStopSignal } from './run-daemon.js';
export type { DaemonOptions } from './run-daemon.js';
export {
  createHostRootService,
  describeHostRoot,
  migrateAndDescribe,
} from './host-root-service.js';
export { convergeHostInstall } from './install/install-agent.js';
export type { ConvergeOptions } from './install/install-agent.js';
export { createReleaseArchives } from './upgrade/release-archives.js';
export type { ArchiveHandler, DownloadProgress, ParsedSource } from './upgrade/archive-handler.js';
export { guardLegacySeed } from './upgrade/legacy-seed-guard.js';
export { startupStabilityMs } from './run-daemon.js';
