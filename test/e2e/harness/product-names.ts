/**
 * The product's names as seen from outside, for scenarios and diagnostics.
 * Copies of `shared/layout` (`unitNames`, `hostPaths`): the harness runs
 * from the workspace root, which does not depend on the workspace
 * packages, and a scenario should fail when the product moves a file an
 * operator relies on rather than follow it silently.
 */
export const productUnits = {
  agent: 'aks-flex-node-agent.service',
  agentSocket: 'aks-flex-node-agent.socket',
  recovery: 'aks-flex-node-agent-recovery.service',
  bootstrap: 'aks-flex-node-bootstrap.service',
} as const;

export const productPaths = {
  /** Where `start` installs the executable operators call. */
  installedBinary: '/opt/unbounded/agent/bin/aks-flex-node',
  socket: '/run/aks-flex-node/agent.sock',
  configDir: '/etc/aks-flex-node',
  unitDir: '/etc/systemd/system',
} as const;

/** The units whose journals a failed scenario prints: the agent, its recovery and first boot. */
export const diagnosedUnits: readonly string[] = [
  productUnits.agent,
  productUnits.recovery,
  productUnits.bootstrap,
];

/** Directories the layout tree shows in full. */
export const layoutRoots: readonly string[] = [
  '/opt/unbounded',
  '/usr/local/bin',
  productPaths.configDir,
];

/** Entries of the unit directory the layout tree shows (including `*.wants` links). */
export const unitGlob = 'aks-flex-node*';
