import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

// Every machine starts in a cgroup of its own. With --keep-unit nspawn puts
// the container under the cgroup it was started in (as <cgroup>/payload),
// and this host has no systemd to hand each nspawn a scope; started from the
// root cgroup, all machines shared one payload tree, so two hosts running a
// unit of the same name shared that unit's cgroup in the unified hierarchy.
// Each host's systemd then read the other's pid as 0 ("Failed to kill
// control group … Input/output error") and units failed with 219/CGROUP or
// hung in start-pre, which made the e2e suite flaky whenever two files ran
// the same product unit at once.

/** Parent of every machine's cgroup, in each hierarchy; the teardown script knows it too. */
export const machineCgroupParent = 'aks-flex-node-e2e';

/**
 * The cgroup hierarchies nspawn places a container in: on a unified host
 * the one tree at /sys/fs/cgroup; on a hybrid or legacy host the
 * name=systemd tree, plus the unified tree when the host has one.
 */
export function cgroupHierarchies(): string[] {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return ['/sys/fs/cgroup'];
  return ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified'].filter((root) =>
    existsSync(path.join(root, 'cgroup.procs')),
  );
}

/**
 * Creates the machine's cgroup in every hierarchy and returns the
 * `cgroup.procs` files nspawn must join before it starts. Reused across a
 * machine's reboots; destroy-machine.sh removes it with the machine.
 */
export function createMachineCgroup(machineDir: string): string[] {
  // Named after the directory, not the machine, so that the teardown script
  // finds it from the directory alone.
  const machineName = path.basename(machineDir);
  const hierarchies = cgroupHierarchies();
  if (hierarchies.length === 0) {
    throw new Error(
      `give machine ${machineName} a cgroup of its own: no cgroup hierarchy is mounted under /sys/fs/cgroup; mount cgroup2 there (systemd-nspawn needs it to boot systemd)`,
    );
  }
  return hierarchies.map((root) => {
    const dir = path.join(root, machineCgroupParent, machineName);
    mkdirSync(dir, { recursive: true });
    return path.join(dir, 'cgroup.procs');
  });
}

/**
 * `sh -c` program that moves itself into each cgroup named before `--`
 * and then execs the rest, so nspawn starts already inside the machine's
 * cgroup; the pid stays the same, which the machine record relies on.
 */
export const joinCgroupsThenExec =
  'set -eu; while [ "$1" != -- ]; do echo "$$" > "$1"; shift; done; shift; ' +
  'command -v "$1" >/dev/null || { echo "$1 not found: install systemd-container" >&2; exit 127; }; ' +
  'exec "$@"';
