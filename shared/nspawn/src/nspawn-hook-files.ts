import path from 'node:path';
import { nspawnMachineFiles, type HostPaths, type NspawnMachine } from '@aks-flex-node/layout';

/** Where one machine's hooks live: both in the unit directory, as the Go releases wrote them. */
export interface NspawnHookFiles {
  readonly regenerateConfigUnit: string;
  /** The drop-in directory of the machine's unit. */
  readonly overrideDir: string;
  readonly overrideFile: string;
}

/** The hook files of one machine under the host's unit directory. */
export function nspawnHookFiles(
  paths: Pick<HostPaths, 'unitDir'>,
  machine: NspawnMachine,
): NspawnHookFiles {
  // Only the unit directory matters for the hooks; the machine's other paths are not read.
  const files = nspawnMachineFiles({ ...paths, machinesDir: '', nspawnConfigDir: '' }, machine);
  return {
    regenerateConfigUnit: files.regenerateConfigUnit,
    overrideDir: files.overrideDir,
    overrideFile: path.join(files.overrideDir, 'override.conf'),
  };
}
