import { canonicalPath } from '@aks-flex-node/fs';
import type { HostRootPaths } from './host-root-paths.js';

/**
 * The host root as every agent path is built from it: the legacy root,
 * resolved, on a linked host; otherwise the root with any link on the way
 * resolved, even before it exists. Agent paths are compared with resolved
 * link targets, so an unresolved `/opt/unbounded/agent/...` would never equal
 * a `current` link that resolves to `/usr/local/...`.
 */
export async function resolveHostRoot(paths: HostRootPaths): Promise<string> {
  return canonicalPath(paths.root);
}
