import type { HostRootResponse, MigrateResponse } from '@aks-flex-node/api';
import { hostRootMarkers } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import type { HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';
import { isLegacyReleased } from './is-legacy-released.js';
import { migrateHostRoot } from './migrate-host-root.js';
import { plannedHostRoot } from './planned-host-root.js';
import { resolveHostRoot } from './resolve-host-root.js';

/**
 * The host root as `GET /v1/host-root` and `host-root --json` report it.
 * Changes nothing. It lives here, not in the daemon, so the `host-root`
 * command stays a small process that loads none of the daemon's libraries.
 */
export async function describeHostRoot(paths: HostRootPaths): Promise<HostRootResponse> {
  const markers = hostRootMarkers();
  return {
    path: paths.root,
    resolved: await resolveHostRoot(paths),
    planned: await plannedHostRoot(paths, markers),
    state: await hostRootState(paths),
    legacyReleased: await isLegacyReleased(paths),
  };
}

/** Runs Migrate and reports the state before and the host root after. The caller holds the lock. */
export async function migrateAndDescribe(
  paths: HostRootPaths,
  log: Logger,
): Promise<MigrateResponse> {
  const before = await hostRootState(paths);
  await migrateHostRoot(paths, log, hostRootMarkers());
  return { before, after: await describeHostRoot(paths) };
}
