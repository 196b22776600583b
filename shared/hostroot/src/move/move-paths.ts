import type { HostRootPaths } from '../host-root-paths.js';

/**
 * The paths the move works with: the two roots, plus the two files under
 * `/etc/aks-flex-node` that decide readiness. shared/layout's `hostPaths`
 * (or `hostPathsUnder(tmp)`) has this shape.
 */
export interface HostRootMovePaths extends HostRootPaths {
  /** Digests of the daemon binaries that ran on a linked host; the move deletes it when done. */
  readonly hostRootAgentDigests: string;
  /** The AgentUpgrade signal: while it exists an upgrade is unreported, and the host is not moved. */
  readonly signalFile: string;
}
