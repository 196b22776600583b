import type { ColdRoleName } from '../roles/role-homes.js';
import { runReportingErrors } from '../roles/run-reporting-errors.js';
import type { LoadRole, RunRole } from '../roles/run-role.js';

/**
 * The roles that run rarely or for long: the daemon, installs, upgrades,
 * resets and host checks. Each still loads only its own modules, as the
 * imports below stay lazy inside the bundle.
 */
export const coldRoles: Record<ColdRoleName, LoadRole> = {
  agent: loadSupervisor,
  daemon: loadSupervisor,
  start: async () => (await import('../commands/start.js')).runStart,
  bootstrap: async () => (await import('../commands/start.js')).runStart,
  'agent-upgrade': async () => (await import('../commands/agent-upgrade.js')).runAgentUpgrade,
  'recover-agent-upgrade': async () =>
    (await import('../commands/recover-agent-upgrade.js')).runRecoverAgentUpgrade,
  'guard-agent-upgrade': async () =>
    (await import('../commands/guard-agent-upgrade.js')).runGuardAgentUpgrade,
  reset: async () => (await import('../commands/reset.js')).runReset,
  unbootstrap: async () => (await import('../commands/reset.js')).runReset,
  preflight: async () => (await import('../commands/preflight.js')).runPreflight,
  operations: async () => (await import('../commands/operations.js')).runOperations,
};

/**
 * The daemon role. This table is the one place the CLI reaches a service,
 * and only through its entry: `agent` parses the flags, the supervisor
 * builds the rest.
 */
async function loadSupervisor(): Promise<RunRole> {
  const [{ runAgent }, { runSupervisor }] = await Promise.all([
    import('../commands/agent.js'),
    import('@aks-flex-node/supervisor'),
  ]);
  return (args) => runAgent(args, runSupervisor);
}

/** The bundle's entry (BundleEntry): runs one of the cold roles. */
export function runBundleRole(role: string, args: string[]): Promise<number> {
  const load = Object.hasOwn(coldRoles, role) ? coldRoles[role as ColdRoleName] : undefined;
  if (load === undefined) {
    return runReportingErrors(() => Promise.reject(new Error(`no cold role "${role}"`)), args);
  }
  return runReportingErrors(load, args);
}
