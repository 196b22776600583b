import type { HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';

/** Whether the host root is a real directory holding a finished installation. */
export async function isHostRootInstalled(paths: HostRootPaths): Promise<boolean> {
  return (await hostRootState(paths)) === 'installed';
}
