import { agentOnlyDirs, hostLayoutFiles, hostRootSubdirs } from '@aks-flex-node/layout';

/** What the move copies and cleans up; the daemon takes the defaults from shared/layout. */
export interface MoveOptions {
  /** Agent files relative to a root: copied from the legacy root, then removed there. */
  files?: readonly string[];
  /** Directories holding only agent files, removed from the legacy root once empty. Never `bin`. */
  dirs?: readonly string[];
  /** Created under the copied root (0755), as a fresh installation has them. */
  subdirs?: readonly string[];
}

/** {@link MoveOptions} with every default applied. */
export interface MoveSettings {
  readonly files: readonly string[];
  readonly dirs: readonly string[];
  readonly subdirs: readonly string[];
}

/** Applies the layout's defaults once, at the entry point. */
export function resolveMoveSettings(options: MoveOptions = {}): MoveSettings {
  return {
    files: options.files ?? hostLayoutFiles(),
    dirs: options.dirs ?? agentOnlyDirs(),
    subdirs: options.subdirs ?? hostRootSubdirs(),
  };
}
