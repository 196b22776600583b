import path from 'node:path';
import { binaryFile, movingMarkerName, stagingSuffix } from '@aks-flex-node/layout';

/**
 * The two roots every host-root function works between. Production passes
 * `hostPaths` from shared/layout; tests pass the same shape under a temp dir
 * (`<tmp>/opt/unbounded/agent`, `<tmp>/usr/local`). Everything else (parent,
 * staging, marker) is derived from these two, so the shapes cannot disagree.
 */
export interface HostRootPaths {
  /** The host root, `/opt/unbounded/agent`. */
  readonly root: string;
  /** Where releases before the host root installed, `/usr/local`. */
  readonly legacy: string;
}

/**
 * The root's parent. It is the host's, not the agent's: created 0755 when
 * missing, never re-moded, never removed, even when empty.
 */
export function parentOf(paths: HostRootPaths): string {
  return path.dirname(paths.root);
}

/** Beside the root, on the same filesystem, so the move's copy can be renamed into place. */
export function stagingOf(paths: HostRootPaths): string {
  return `${paths.root}${stagingSuffix}`;
}

/** While this exists in the root, a move from the legacy root is unfinished. */
export function movingMarkerOf(paths: HostRootPaths): string {
  return path.join(paths.root, movingMarkerName);
}

/** The plain binary install scripts seed under the legacy root for earlier releases. */
export function legacySeedOf(paths: HostRootPaths): string {
  return path.join(paths.legacy, binaryFile);
}
