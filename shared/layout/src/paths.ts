import path from 'node:path';
import { movingMarkerName, type NspawnMachine } from './names.js';

/**
 * Every absolute path the product uses on a host. Functions take this object
 * rather than constants so that tests run against a temporary tree; production
 * uses {@link hostPaths}, built over `/`.
 */
export interface HostPaths {
  /** The prefix everything is under: `/` in production. */
  readonly prefix: string;
  /**
   * The agent's host root. It holds binaries and helpers only: no config,
   * state or units. Writable on every supported host, including those whose
   * `/usr` is read-only.
   */
  readonly root: string;
  /**
   * The root's parent. It belongs to the host (offline artifacts, OCI
   * layouts, sometimes a mount): created 0755 when missing, otherwise never
   * changed or removed.
   */
  readonly parent: string;
  /** Where releases before the host root installed; read-only on some hosts. */
  readonly legacy: string;
  /** The move copies the legacy files here before it replaces the link. */
  readonly staging: string;
  /** Configuration and upgrade state; outside the root so a rollback to an older release finds it. */
  readonly configDir: string;
  readonly configFile: string;
  /**
   * The config's last-good copy: the daemon's own (services/supervisor,
   * startup/config-last-good.ts). The exact bytes of the last config a daemon
   * started and served with, 0600 like the config (it may hold a token), so a
   * torn write of the config (empty, truncated, not JSON) converges at the next
   * start instead of needing a hand edit. Never read by the Go releases.
   */
  readonly configLastGood: string;
  /** The pending AgentUpgrade signal. Not under the root: it must survive a rollback. */
  readonly signalFile: string;
  /** Digests of every daemon binary that ran on a linked host. */
  readonly hostRootAgentDigests: string;
  /** Units live where systemd looks, and `/etc` is writable even when `/usr` is not. */
  readonly unitDir: string;
  /** Runtime state: the socket and the activation lock. Gone at reboot, on purpose. */
  readonly runDir: string;
  readonly socket: string;
  readonly activationLock: string;
  /** The binary install scripts seed for releases that predate the host root. */
  readonly legacySeed: string;
  /** Durable daemon state that is not configuration: operation records survive restarts. */
  readonly stateDir: string;
  /** One JSON record per finished operation, so a result outlives the daemon that produced it. */
  readonly operationsDir: string;
  /**
   * Inside the root while a move from the legacy root is unfinished: written
   * into the staging copy, so it arrives with the rename, and removed last,
   * after the legacy files are gone. uninstall.sh removes it too.
   */
  readonly movingMarker: string;
  /**
   * The Go releases' activation lock, a flock(2) they take for upgrades,
   * recovery and their scripts. Every holder of {@link activationLock} holds
   * it too, so a Go release left as last-good is excluded as well.
   */
  readonly goUpgradeLock: string;
  /**
   * What Ignition writes for the first-boot unit: bootstrap.sh, its settings
   * and the base config. They can carry a bootstrap token and a signed agent
   * URL, so the unit removes the whole directory once bootstrap succeeds.
   */
  readonly firstBootDir: string;
  readonly firstBootScript: string;
  readonly firstBootEnv: string;
  readonly firstBootBaseConfig: string;
  /**
   * A service principal's secret or certificate, provisioned beside the
   * first-boot files but kept: the agent reads it after bootstrap.
   */
  readonly credentialsDir: string;
  /**
   * Release archives while the daemon downloads them (root-only, removed once
   * extracted): on the state directory's disk, as an archive is too large for
   * a tmpfs /tmp.
   */
  readonly downloadsDir: string;
  /**
   * The single-instance guard: a flock on this file in the root-only run
   * directory, so no other user can hold it, and the kernel frees it when
   * the daemon dies. Replaces the abstract socket name any user could bind.
   */
  readonly daemonLock: string;
  /**
   * The agent library's state of each nspawn machine
   * (`<machine>-nspawn-lifecycle.json`): whether it has GPUs to rewire after
   * it starts. Written at provisioning; the hooks only read it.
   */
  readonly nspawnLifecycleStateDir: string;
  /** Monotonic times of the agent unit's recent daemon starts (tmpfs: a reboot clears it, as it clears systemd's counter). */
  readonly agentStarts: string;
  /**
   * The nspawn machines' root filesystems (`<machinesDir>/kube1`): the Go
   * agent library provisions them, and reset removes them once the machines
   * are stopped (spec daemon 8.1). A machine's `usr/local/bin/aks-flex-node`
   * is its copy of the agent (the kubelet's exec-credential helper), kept
   * equal to `current`.
   */
  readonly machinesDir: string;
  /** The machines' `<machine>.nspawn` settings the agent library writes; reset removes them. */
  readonly nspawnConfigDir: string;
  /** Where unbounded-net keeps the node's WireGuard keys; reset removes the two it writes. */
  readonly wireguardDir: string;
  /** Digests of the helper and the executables by file identity, for the next start of this boot (a reboot clears it). */
  readonly fileDigestCache: string;
  /**
   * The `token` command's cache of access tokens (one 0600 file per
   * credential and scope), so the kubelet's frequent exec-credential calls do
   * not each go to Entra ID, as kubelogin's cache does. In the root-only run
   * directory, made 0700: a token is a secret, and tmpfs keeps it off disk;
   * a reboot clears it, which costs one token request.
   */
  readonly tokenCacheDir: string;
  /**
   * Where the Arc agent (azcmagent) writes the challenge files of its local
   * identity endpoint. The endpoint's 401 names a file to read; a name
   * outside this directory is refused, so a process answering on that port
   * cannot make root read and send any other file.
   */
  readonly arcChallengeDir: string;
}

/**
 * Builds {@link HostPaths} under a prefix; `hostPathsUnder('/')` is production.
 * Each path is computed when first read, then kept: a role reads a few of
 * them (`token` only the cache's and Arc's), and joining all of them at
 * every start cost the kubelet's `token` call about 1.7 M instructions, 7%
 * of what it costs beyond Node.js's own start (callgrind; bench/token-startup.sh).
 */
export function hostPathsUnder(prefix: string): HostPaths {
  const at = (p: string): string => path.join(prefix, p);
  const root = at('/opt/unbounded/agent');
  const configDir = at('/etc/aks-flex-node');
  const runDir = at('/run/aks-flex-node');
  return computedOnFirstRead<HostPaths>({
    prefix: () => path.resolve(prefix),
    root: () => root,
    parent: () => path.dirname(root),
    legacy: () => at('/usr/local'),
    staging: () => `${root}.staging`,
    configDir: () => configDir,
    configFile: () => path.join(configDir, 'config.json'),
    configLastGood: () => configLastGoodFor(path.join(configDir, 'config.json')),
    signalFile: () => path.join(configDir, 'agent-upgrade-signal.json'),
    hostRootAgentDigests: () => path.join(configDir, 'host-root-agents'),
    unitDir: () => at('/etc/systemd/system'),
    runDir: () => runDir,
    socket: () => path.join(runDir, 'agent.sock'),
    activationLock: () => path.join(runDir, 'activation.lock'),
    legacySeed: () => at('/usr/local/bin/aks-flex-node'),
    stateDir: () => at('/var/lib/aks-flex-node'),
    operationsDir: () => at('/var/lib/aks-flex-node/operations'),
    movingMarker: () => path.join(root, movingMarkerName),
    goUpgradeLock: () => at('/run/aks-flex-node-agent-upgrade.lock'),
    firstBootDir: () => path.join(configDir, 'first-boot'),
    firstBootScript: () => path.join(configDir, 'first-boot', 'bootstrap.sh'),
    firstBootEnv: () => path.join(configDir, 'first-boot', 'bootstrap.env'),
    firstBootBaseConfig: () => path.join(configDir, 'first-boot', 'base-config.json'),
    credentialsDir: () => path.join(configDir, 'credentials'),
    downloadsDir: () => at('/var/lib/aks-flex-node/downloads'),
    daemonLock: () => path.join(runDir, 'daemon.lock'),
    nspawnLifecycleStateDir: () => at('/etc/unbounded/agent'),
    agentStarts: () => path.join(runDir, 'agent-starts'),
    machinesDir: () => at('/var/lib/machines'),
    nspawnConfigDir: () => at('/etc/systemd/nspawn'),
    wireguardDir: () => at('/etc/wireguard'),
    fileDigestCache: () => path.join(runDir, 'file-digests.json'),
    tokenCacheDir: () => path.join(runDir, 'token-cache'),
    arcChallengeDir: () => at('/var/opt/azcmagent/tokens'),
  });
}

/**
 * An object whose every field is computed by its function when first read,
 * then kept as a plain read-only value; enumerable, so spreading and
 * comparing it see every field.
 */
function computedOnFirstRead<T extends object>(compute: { [K in keyof T]: () => T[K] }): T {
  const fields = {} as T;
  for (const key of Object.keys(compute) as (keyof T & string)[]) {
    Object.defineProperty(fields, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = compute[key]();
        Object.defineProperty(fields, key, { value, enumerable: true, writable: false });
        return value;
      },
    });
  }
  return fields;
}

/** The production paths. */
export const hostPaths: HostPaths = hostPathsUnder('/');

/** systemd unit names. The agent socket pairs with the agent service by name. */
export const unitNames = {
  agent: 'aks-flex-node-agent.service',
  agentSocket: 'aks-flex-node-agent.socket',
  recovery: 'aks-flex-node-agent-recovery.service',
  /** Started with the agent; rolls back a switched candidate that fails. */
  upgradeGuard: 'aks-flex-node-upgrade-guard.service',
  bootstrap: 'aks-flex-node-bootstrap.service',
  /** The machines' DNS network unit the agent library writes; reset disables and removes it. */
  localDnsNetwork: 'unbounded-localdns-network.service',
} as const;

/**
 * The agent's socket and service, the socket first. They are enabled,
 * started and stopped together: stopped alone, the service is started again
 * by the socket's next connection.
 */
export const agentUnits: readonly string[] = [unitNames.agentSocket, unitNames.agent];

/** What an operator runs to stop the daemon by hand. */
export const stopAgentCommand = `systemctl stop ${agentUnits.join(' ')}`;

/**
 * The Go releases queue the daemon's restart after the move's first pass as a
 * transient unit with this prefix and a timestamp; reset stops any still queued,
 * because one that fires mid-reset starts the daemon again (spec daemon 8.4).
 */
export const queuedRestartUnitPrefix = 'aks-flex-node-agent-upgrade-restart-';

/** The units of one nspawn machine: the machine itself, and the oneshot that runs pre-start before it. */
export const nspawnUnitNames = {
  machine: (machine: NspawnMachine) => `systemd-nspawn@${machine}.service`,
  regenerateConfig: (machine: NspawnMachine) =>
    `unbounded-agent-regenerate-config@${machine}.service`,
} as const;

/**
 * This product's own restart, spaced on a transient timer where the agent
 * unit's failure counter cannot be reset (services/supervisor restart
 * executor): the prefix of its unit, with a timestamp. Reset stops any still
 * queued, for the same reason as {@link queuedRestartUnitPrefix}.
 */
export const spacedRestartUnitPrefix = 'aks-flex-node-agent-restart-';

/** Everything of one nspawn machine on the host, as the Go agent library lays it out. */
export interface NspawnMachineFiles {
  /** The machine's root filesystem, holding its copy of the agent. */
  readonly rootfs: string;
  /** `<machine>.nspawn`: the machine's nspawn settings. */
  readonly nspawnConfig: string;
  /** The drop-in directory of the machine's unit, holding the post-start hook. */
  readonly overrideDir: string;
  /** The oneshot that runs the pre-start hook before the machine starts. */
  readonly regenerateConfigUnit: string;
  /** What `machinectl enable` makes: the machine started at boot. */
  readonly enablementLink: string;
}

/** The files of one nspawn machine under `paths`. */
export function nspawnMachineFiles(
  paths: Pick<HostPaths, 'unitDir' | 'machinesDir' | 'nspawnConfigDir'>,
  machine: NspawnMachine,
): NspawnMachineFiles {
  return {
    rootfs: path.join(paths.machinesDir, machine),
    nspawnConfig: path.join(paths.nspawnConfigDir, `${machine}.nspawn`),
    overrideDir: path.join(paths.unitDir, `${nspawnUnitNames.machine(machine)}.d`),
    regenerateConfigUnit: path.join(paths.unitDir, nspawnUnitNames.regenerateConfig(machine)),
    enablementLink: path.join(
      paths.unitDir,
      'machines.target.wants',
      nspawnUnitNames.machine(machine),
    ),
  };
}

/**
 * The template of the pre-start oneshot, which some releases of the agent
 * library write beside (or instead of) the per-machine units.
 */
export const regenerateConfigTemplate = 'unbounded-agent-regenerate-config@.service';

/** The last-good copy of the config at `configPath` (see {@link HostPaths.configLastGood}). */
export function configLastGoodFor(configPath: string): string {
  return `${configPath}.last-good`;
}
