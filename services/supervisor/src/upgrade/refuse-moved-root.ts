import type { AgentBinaryPaths } from '@aks-flex-node/agentbinary';
import { resolveHostRoot } from '@aks-flex-node/hostroot';
import type { HostPaths } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';

/**
 * Refuses a switch whose layout was resolved under a root the host root no
 * longer resolves to. Runs under the lock: the paths were resolved before it
 * was taken, and a move in between would leave them naming files the units
 * no longer run. Throws HOST_ROOT_REFUSED.
 */
export async function refuseMovedRoot(layout: AgentBinaryPaths, paths: HostPaths): Promise<void> {
  const resolvedNow = await resolveHostRoot(paths);
  if (layout.root === resolvedNow) return;
  throw new AgentError(
    'HOST_ROOT_REFUSED',
    `the host root moved from ${layout.root} to ${resolvedNow} after this upgrade resolved its paths`,
    { path: resolvedNow, hint: 'retry the upgrade: it resolves the host root again' },
  );
}
