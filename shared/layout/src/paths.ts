import path from 'node:path';

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
  /** The pending AgentUpgrade signal. Not under the root: it must survive a rollback. */
  readonly signalFile: string;
  /** Digests of every daemon binary that ran on a linked host. */
  readonly digestRecord: string;
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
   * The single-instance guard: a flock on this file in the root-only run
   * directory, so no other user can hold it, and the kernel frees it when
   * the daemon dies. Replaces the abstract socket name any user could bind.
   */
  readonly daemonLock: string;
}

/** Builds {@link HostPaths} under a prefix; `hostPathsUnder('/')` is production. */
export function hostPathsUnder(prefix: string): HostPaths {
  const at = (p: string): string => path.join(prefix, p);
  const root = at('/opt/unbounded/agent');
  const configDir = at('/etc/aks-flex-node');
  const runDir = at('/run/aks-flex-node');
  return {
    prefix: path.resolve(prefix),
    root,
    parent: path.dirname(root),
    legacy: at('/usr/local'),
    staging: `${root}.staging`,
    configDir,
    configFile: path.join(configDir, 'config.json'),
    signalFile: path.join(configDir, 'agent-upgrade-signal.json'),
    digestRecord: path.join(configDir, 'host-root-agents'),
    unitDir: at('/etc/systemd/system'),
    runDir,
    socket: path.join(runDir, 'agent.sock'),
    activationLock: path.join(runDir, 'activation.lock'),
    legacySeed: at('/usr/local/bin/aks-flex-node'),
    stateDir: at('/var/lib/aks-flex-node'),
    operationsDir: at('/var/lib/aks-flex-node/operations'),
    daemonLock: path.join(runDir, 'daemon.lock'),
  };
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
} as const;
