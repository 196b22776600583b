import { AgentError } from '@aks-flex-node/log';
import type { HostRootPaths } from './host-root-paths.js';

// Reset does not exist yet, so the hint names only what the operator can run
// today; when reset lands it becomes the next step again.
const resetThenInstall =
  'stop the agent, remove the installation you do not keep (its lib/aks-flex-node), then run `aks-flex-node start` again';

/**
 * Both roots hold the blue/green layout and no move is in progress. Either
 * could be the live installation, so the agent refuses rather than guess;
 * reset sweeps both roots and does not run migrate, so it works here.
 */
export function refuseInstalledUnderBoth(paths: HostRootPaths): AgentError {
  return new AgentError(
    'HOST_ROOT_REFUSED',
    `the agent is installed under both ${paths.legacy} and ${paths.root}; ${resetThenInstall}`,
    { path: paths.root, hint: resetThenInstall },
  );
}

/** A legacy installation, and a directory at the root that holds no installation. */
export function refuseRootAlsoExists(paths: HostRootPaths): AgentError {
  const next = `remove ${paths.root} if nothing uses it, or ${resetThenInstall}`;
  return new AgentError(
    'HOST_ROOT_REFUSED',
    `the agent is installed under ${paths.legacy}, but ${paths.root} also exists; ${next}`,
    { path: paths.root, hint: next },
  );
}

/**
 * Something that is neither a directory nor a link is at the root. It is not
 * the agent's, and reset leaves it too, so the operator has to move it.
 */
export function refuseRootNotDirectory(paths: HostRootPaths): AgentError {
  const next = `move ${paths.root} aside (it is not the agent's), then install again`;
  return new AgentError(
    'HOST_ROOT_REFUSED',
    `${paths.root} is not a directory, so the agent can neither install there nor link it to ${paths.legacy}; ${next}`,
    { path: paths.root, hint: next },
  );
}
