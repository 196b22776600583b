import { describeHostRoot, migrateAndDescribe, type HostRootPaths } from '@aks-flex-node/hostroot';
import type { Logger } from '@aks-flex-node/log';
import type { HostRootService } from './deps.js';

/** The daemon's {@link HostRootService} over shared/hostroot. */
export function createHostRootService(paths: HostRootPaths, log: Logger): HostRootService {
  return {
    describe: () => describeHostRoot(paths),
    migrate: () => migrateAndDescribe(paths, log),
  };
}
