import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { RunningMachine } from './boot-machine.js';
import { bootMachine } from './boot-machine.js';
import { destroyMachineSync } from './destroy-machine.js';
import type { MachineCommand, RunOptions } from './enter-machine.js';
import { runInMachine, spawnInMachine } from './enter-machine.js';
import { ensureRootfs } from './ensure-rootfs.js';
import type { HostVariant } from './host-variants.js';
import { prepareVariantDisk, variantNspawnArgs } from './host-variants.js';
import { trackMachine, untrackMachine } from './live-machines.js';
import { createMachineDisk } from './machine-disk.js';
import { powerOffMachine } from './power-off.js';
import type { RealNode, RealNodeOptions } from './real-node.js';
import { layOutRealNode } from './real-node.js';
import type { CommandResult } from './run-process.js';

/** A booted throwaway host that a scenario drives. */
export interface Host {
  /** Machine name and hostname, unique per host. */
  readonly name: string;
  readonly variant: HostVariant;
  /** How the latest boot ended: `running`, or `degraded` when some unit failed. */
  readonly bootState: () => string;
  /**
   * The real-shaped node laid out at the first boot (machines with their
   * copy of the agent, hooks, LocalDNS, links, keys, bridge CNI); undefined
   * on a host booted with `node: { empty: why }`.
   */
  readonly node: RealNode | undefined;
  /** Runs a command as root in the host; resolves for every exit code. */
  readonly run: (command: MachineCommand, options?: RunOptions) => Promise<CommandResult>;
  /** Starts a command as root in the host with its stdin left open; the caller ends it. */
  readonly spawn: (
    command: MachineCommand,
    options?: Omit<RunOptions, 'input'>,
  ) => ChildProcessWithoutNullStreams;
  /** Powers off and boots the same disk again: everything written survives, /run and /tmp do not. */
  readonly reboot: () => Promise<void>;
  /** Powers off and deletes the host. Safe to call twice. */
  readonly dispose: () => Promise<void>;
}

/** What kind of host to boot; every setting has a default. */
export interface BootHostOptions {
  readonly variant?: HostVariant;
  /** Start of the machine name; shows in hostnames and in the machines directory. */
  readonly name?: string;
  /** Deadline for each boot. Default 120 s. */
  readonly bootTimeoutMs?: number;
  /**
   * Changes the disk before the first boot, after the variant's changes, as
   * Ignition does from the initramfs (see `writeIgnitionToDisk`).
   */
  readonly provision?: (merged: string) => void | Promise<void>;
  /**
   * What the host is before the scenario starts. By default a node as the Go
   * releases leave it ({@link layOutRealNode}, with these options): a product
   * scenario that passes on an empty host only may still lose a real node.
   * `{ empty: why }` boots the bare OS; only a test that truly needs that (the
   * harness's own checks, a first boot that provisions the node itself) may
   * ask, and says why.
   */
  readonly node?: RealNodeOptions | EmptyHost;
}

/** A host with nothing but the OS; `empty` says why the scenario needs that. */
export interface EmptyHost {
  readonly empty: string;
}

function isEmptyHost(node: RealNodeOptions | EmptyHost | undefined): node is EmptyHost {
  return node !== undefined && 'empty' in node;
}

/**
 * Boots a fresh host of the variant on an overlay over the cached rootfs.
 * The host is torn down on SIGINT, SIGTERM or exit if its owner has not
 * disposed of it by then.
 */
export async function bootHost(options: BootHostOptions = {}): Promise<Host> {
  const variant = options.variant ?? 'plain';
  const bootTimeoutMs = options.bootTimeoutMs ?? 120_000;
  const rootfs = await ensureRootfs();
  const disk = createMachineDisk(rootfs, `${options.name ?? 'afn'}-${variant}`);
  trackMachine(disk);
  const bootOptions = {
    uuid: randomUUID().replaceAll('-', ''),
    extraArgs: variantNspawnArgs(variant, disk.merged),
    timeoutMs: bootTimeoutMs,
  };
  let machine: RunningMachine | undefined;
  const destroy = (): void => {
    machine = undefined;
    untrackMachine(disk);
    destroyMachineSync(disk.dir);
    disk.stopGuard();
  };
  try {
    prepareVariantDisk(variant, disk.merged);
    await options.provision?.(disk.merged);
    machine = await bootMachine(disk, bootOptions);
  } catch (err) {
    destroy();
    throw err;
  }
  const requireMachine = (): RunningMachine => {
    if (machine === undefined) throw new Error(`host ${disk.name} is not running`);
    return machine;
  };
  let node: RealNode | undefined;
  const host: Host = {
    name: disk.name,
    variant,
    bootState: () => requireMachine().bootState,
    get node() {
      return node;
    },
    run: (command, runOptions) => runInMachine(requireMachine().leader.pid, command, runOptions),
    spawn: (command, runOptions) =>
      spawnInMachine(requireMachine().leader.pid, command, runOptions),
    reboot: async () => {
      await powerOffMachine(requireMachine());
      machine = undefined;
      machine = await bootMachine(disk, bootOptions);
    },
    // Thrown away, not shut down: the teardown kills the container's init,
    // which ends its pid namespace at once, and removes the disk. An orderly
    // power-off of a host no one will read again cost each scenario a
    // shutdown of every unit and systemd-shutdown's own second of CPU (75 of
    // them in a CI run), on a machine the other scenarios were waiting for.
    dispose: () => {
      destroy();
      return Promise.resolve();
    },
  };
  if (!isEmptyHost(options.node)) {
    // Once, at the first boot: the node's files survive a reboot as on a real
    // node; its links and rules do not, as they would not there either.
    try {
      node = await layOutRealNode(host, {
        // Nothing runs from a noexec /opt: on such a node the Go release
        // that provisioned it kept its helpers under /usr/local.
        ...(variant === 'noexec' ? { helperRoot: '/usr/local' } : {}),
        ...options.node,
      });
    } catch (err) {
      await host.dispose();
      throw err;
    }
  }
  return host;
}
