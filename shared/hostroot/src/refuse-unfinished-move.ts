import { AgentError } from '@aks-flex-node/log';
import type { HostRootPaths } from './host-root-paths.js';
import { hostRootState } from './host-root-state.js';

/**
 * A direct activation waits for an unfinished host-root move: the files
 * still under the legacy root are a whole installation a release before the
 * host root would run from, and the daemon finishes the move at its next
 * start. Reads only, so a preflight can run it too.
 *
 * Throws HOST_ROOT_REFUSED.
 */
export async function refuseUnfinishedMove(paths: HostRootPaths): Promise<void> {
  if ((await hostRootState(paths)) !== 'moving') return;
  throw new AgentError(
    'HOST_ROOT_REFUSED',
    `the move of the agent's files from ${paths.legacy} to ${paths.root} has not finished`,
    {
      path: paths.root,
      hint: 'restart the agent (systemctl restart aks-flex-node-agent) so it finishes the move, then retry',
    },
  );
}
