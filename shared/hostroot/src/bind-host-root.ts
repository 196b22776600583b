import { hostPaths, hostRootMarkers, hostRootSubdirs } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import type { HostRootPaths } from './host-root-paths.js';
import { hostRootState, type HostRootState } from './host-root-state.js';
import { isHostRootInstalled } from './is-host-root-installed.js';
import { isLegacyReleased } from './is-legacy-released.js';
import { migrateHostRoot } from './migrate-host-root.js';
import { ownedHostFiles } from './owned-host-files.js';
import { plannedHostRoot } from './planned-host-root.js';
import { prepareHostRoot } from './prepare-host-root.js';
import { removeHostRoot } from './remove-host-root.js';
import { removeLegacySeed } from './remove-legacy-seed.js';
import { resolveHostRoot } from './resolve-host-root.js';
import type { Relabel } from './restore-labels.js';

/**
 * The host-root functions with the paths, markers and subdirectories fixed.
 * Callers use this; the functions it wraps take the paths as an argument so
 * that tests run them against a temp tree.
 */
export interface HostRoot {
  readonly paths: HostRootPaths;
  state(): Promise<HostRootState>;
  resolve(): Promise<string>;
  planned(): Promise<string>;
  migrate(log: Logger): Promise<void>;
  /** Creates the root and the layout's subdirectories (`hostRootSubdirs`). */
  prepare(log: Logger): Promise<void>;
  isInstalled(): Promise<boolean>;
  isLegacyReleased(): Promise<boolean>;
  remove(log: Logger): Promise<void>;
  removeLegacySeed(log: Logger): Promise<void>;
  ownedFiles(): string[];
}

/** Options for {@link bindHostRoot}. */
export interface BindHostRootOptions {
  /** Replaces the SELinux relabel; only tests and sandboxes need this. */
  relabel?: Relabel;
}

/**
 * Fixes the host-root functions to `paths` (for example
 * `hostPathsUnder(tmp)` in a service's test), with the layout's markers and
 * subdirectories from shared/layout.
 */
export function bindHostRoot(paths: HostRootPaths, options: BindHostRootOptions = {}): HostRoot {
  const markers = hostRootMarkers();
  const prepareOptions = options.relabel === undefined ? {} : { relabel: options.relabel };
  return {
    paths,
    state: () => hostRootState(paths),
    resolve: () => resolveHostRoot(paths),
    planned: () => plannedHostRoot(paths, markers),
    migrate: (log) => migrateHostRoot(paths, log, markers),
    prepare: (log) => prepareHostRoot(paths, log, hostRootSubdirs(), prepareOptions),
    isInstalled: () => isHostRootInstalled(paths),
    isLegacyReleased: () => isLegacyReleased(paths),
    remove: (log) => removeHostRoot(paths, log),
    removeLegacySeed: (log) => removeLegacySeed(paths, log),
    ownedFiles: () => ownedHostFiles(paths),
  };
}

/** The production host root: `/opt/unbounded/agent` and `/usr/local`. */
export const hostRoot: HostRoot = bindHostRoot(hostPaths);
