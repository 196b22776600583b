import type { ActivationServicePlan } from '@aks-flex-node/api';

/**
 * The product's service adapter for a direct activation (spec agentbinary
 * §3.6.3). The activation itself knows no unit name, signal or systemd:
 * each product supplies these, and tests pass a fake that records calls.
 */
export interface ActivationService {
  /** Reads only: whether the service is installed and active, whether its assets need rewriting. */
  preflight(): Promise<ActivationServicePlan>;
  /** The resolved binary the service's main process executes now, if it runs. */
  runningExecutable(plan: ActivationServicePlan): Promise<string | undefined>;
  /** Writes the service's units and scripts when the plan says so; nothing is reloaded yet. */
  prepare(plan: ActivationServicePlan): Promise<void>;
  reload(plan: ActivationServicePlan): Promise<void>;
  /** Restarts the service if it was active; an inactive one stays stopped. */
  restart(plan: ActivationServicePlan, signal: AbortSignal): Promise<void>;
  /** Resolves once the service runs `expected` steadily; throws when it does not in time. */
  waitHealthy(plan: ActivationServicePlan, expected: string, signal: AbortSignal): Promise<void>;
}
