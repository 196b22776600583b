import path from 'node:path';
import { nspawnUnitNames, type HostPaths, type NspawnMachine } from '@aks-flex-node/layout';

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
  const overrideDir = path.join(paths.unitDir, `${nspawnUnitNames.machine(machine)}.d`);
  return {
    regenerateConfigUnit: path.join(paths.unitDir, nspawnUnitNames.regenerateConfig(machine)),
    overrideDir,
    overrideFile: path.join(overrideDir, 'override.conf'),
  };
}
