import { exists, removeOwned, removeOwnedTree } from '@aks-flex-node/fs';
import {
  nspawnMachineFiles,
  nspawnMachines,
  nspawnUnitNames,
  regenerateConfigTemplate,
  type HostPaths,
  type NspawnMachine,
} from '@aks-flex-node/layout';
import path from 'node:path';
import type { ResetEffects } from './reset-effects.js';

/** Every path of one machine, as {@link removeMachines} removes them. */
export function machineFileList(paths: HostPaths, machine: NspawnMachine): string[] {
  const files = nspawnMachineFiles(paths, machine);
  return [
    files.enablementLink,
    files.nspawnConfig,
    files.overrideDir,
    files.regenerateConfigUnit,
    files.rootfs,
  ];
}

/** The machines with anything of theirs on the host: rootfs, settings, hooks or enablement. */
export async function machinesPresent(paths: HostPaths): Promise<NspawnMachine[]> {
  const present: NspawnMachine[] = [];
  for (const machine of nspawnMachines) {
    for (const file of machineFileList(paths, machine)) {
      if (await exists(file)) {
        present.push(machine);
        break;
      }
    }
  }
  return present;
}

/**
 * Stops each machine the host has, and its pre-start oneshot (spec daemon
 * 8.2, "stop kube1 and kube2"): before their root filesystems go, since a
 * running machine holds mounts in it and its network agent would recreate
 * the interfaces reset removes next. A machine systemd has not loaded counts
 * as stopped; a machine machined still knows after that (started by hand)
 * is terminated. Throws SYSTEMD_FAILED.
 */
export async function stopMachines(paths: HostPaths, effects: ResetEffects): Promise<void> {
  for (const machine of await machinesPresent(paths)) {
    // The oneshot first: it runs before the machine and would start it again.
    await effects.stop([nspawnUnitNames.regenerateConfig(machine)]);
    await effects.stop([nspawnUnitNames.machine(machine)]);
    // Then whatever else runs it: one started by hand outlives its unit's
    // stop, and would hold mounts in the rootfs removed next.
    await effects.terminateMachine(machine);
  }
}

/**
 * Removes each machine once stopped (spec daemon 8.1): its enablement, its
 * `.nspawn` settings, its unit's drop-in directory (the post-start hook),
 * its pre-start oneshot, then its root filesystem with the machine's copy of
 * the agent; finally the oneshot's template. Each path is checked to exist
 * first. Returns what it removed. Throws HOST_ROOT_IO.
 */
export async function removeMachines(paths: HostPaths): Promise<string[]> {
  const removed: string[] = [];
  const remove = async (file: string, tree: boolean) => {
    const was = tree ? await removeOwnedTree(file) : await removeIfThere(file);
    if (was) removed.push(file);
  };
  for (const machine of nspawnMachines) {
    const files = nspawnMachineFiles(paths, machine);
    // Enablement first: once it is gone nothing starts the machine at boot,
    // so a reset interrupted after it leaves a node that stays down.
    await remove(files.enablementLink, false);
    await remove(files.nspawnConfig, false);
    await remove(files.overrideDir, true);
    await remove(files.regenerateConfigUnit, false);
    await remove(files.rootfs, true);
  }
  await remove(path.join(paths.unitDir, regenerateConfigTemplate), false);
  return removed;
}

async function removeIfThere(file: string): Promise<boolean> {
  if (!(await exists(file))) return false;
  await removeOwned(file);
  return true;
}
