import type { HostRootResponse, MigrateResponse } from '@aks-flex-node/api';
import {
  hostRootState,
  isLegacyReleased,
  migrateHostRoot,
  plannedHostRoot,
  resolveHostRoot,
  type HostRootPaths,
} from '@aks-flex-node/hostroot';
import { hostRootMarkers } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import type { HostRootService } from './deps.js';

/** Reports the host root as `GET /v1/host-root` and `host-root --json` show it. Changes nothing. */
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
  await migrateHostRoot(log, paths, hostRootMarkers());
  return { before, after: await describeHostRoot(paths) };
}

/** The daemon's {@link HostRootService} over shared/hostroot. */
export function createHostRootService(paths: HostRootPaths, log: Logger): HostRootService {
  return {
    describe: () => describeHostRoot(paths),
    migrate: () => migrateAndDescribe(paths, log),
  };
}
