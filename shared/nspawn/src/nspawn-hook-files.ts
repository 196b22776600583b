import path from 'node:path';
import type { HostPaths, NspawnMachine } from '@aks-flex-node/layout';

/** The systemd unit that runs the machine: the nspawn template's instance. */
export function machineUnitName(machine: NspawnMachine): string {
  return `systemd-nspawn@${machine}.service`;
}

/** The oneshot unit that runs pre-start before the machine starts. */
export function regenerateConfigUnitName(machine: NspawnMachine): string {
  return `unbounded-agent-regenerate-config@${machine}.service`;
}

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
  const overrideDir = path.join(paths.unitDir, `${machineUnitName(machine)}.d`);
  return {
    regenerateConfigUnit: path.join(paths.unitDir, regenerateConfigUnitName(machine)),
    overrideDir,
    overrideFile: path.join(overrideDir, 'override.conf'),
  };
}
