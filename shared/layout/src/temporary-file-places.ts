import path from 'node:path';
import { hostLayoutFiles, nspawnMachines } from './names.js';
import { unitNames, type HostPaths } from './paths.js';

/**
 * A directory the product writes files in through temporary names (shared/fs
 * writeThroughTemp and replaceSymlinkAtomic), and which files there are its
 * own: only temporaries made for those are ever removed, so an operator's
 * file in a shared directory (`bin`, `/etc/systemd/system`) stays.
 */
export interface TemporaryFilePlace {
  readonly dir: string;
  /** Whether the product writes a file of this name in {@link dir}. */
  readonly isProductFile: (name: string) => boolean;
  /**
   * Under the legacy root, which is read-only on a moved host (its units no
   * longer name it) or on Azure Container Linux: nothing can have been left
   * there then, so a refusal to write is no fault.
   */
  readonly mayBeReadOnly: boolean;
}

/**
 * The layout's directories under `root` (bin, the slot directory, libexec),
 * each with the layout files it holds. Pass 2 of the move sweeps the legacy
 * root with these before it releases it.
 */
export function layoutFilePlaces(
  root: string,
  files: readonly string[] = hostLayoutFiles(),
  mayBeReadOnly = false,
): TemporaryFilePlace[] {
  const byDir = new Map<string, Set<string>>();
  for (const rel of files) {
    const dir = path.join(root, path.dirname(rel));
    const names = byDir.get(dir) ?? new Set<string>();
    names.add(path.basename(rel));
    byDir.set(dir, names);
  }
  return [...byDir].map(([dir, names]) => ({
    dir,
    isProductFile: (name) => names.has(name),
    mayBeReadOnly,
  }));
}

/**
 * Every place the product writes through temporary names, for the daemon's
 * start sweep: the layout under the host root and the legacy root, the host
 * root's link in its parent, the config directory, the units, the operation
 * records, the run directory's records, and each nspawn machine's copy of the
 * agent.
 */
export function temporaryFilePlaces(paths: HostPaths): TemporaryFilePlace[] {
  const place = (dir: string, names: readonly string[]): TemporaryFilePlace => ({
    dir,
    isProductFile: (name) => names.includes(name),
    mayBeReadOnly: false,
  });
  const inDir = (files: readonly string[]) => files.map((file) => path.basename(file));
  return [
    ...layoutFilePlaces(paths.root),
    ...layoutFilePlaces(paths.legacy, hostLayoutFiles(), true),
    // Migrate and the move's undo replace the root's link beside it.
    place(paths.parent, [path.basename(paths.root)]),
    place(
      paths.configDir,
      inDir([paths.configFile, paths.configLastGood, paths.signalFile, paths.hostRootAgentDigests]),
    ),
    place(paths.unitDir, Object.values(unitNames)),
    {
      dir: paths.operationsDir,
      isProductFile: (name) => name.endsWith('.json'),
      mayBeReadOnly: false,
    },
    place(paths.runDir, inDir([paths.fileDigestCache])),
    ...nspawnMachines.map((machine) =>
      place(path.join(paths.machinesDir, machine, 'usr/local/bin'), ['aks-flex-node']),
    ),
  ];
}
