import { hostPaths } from '@aks-flex-node/layout';
import { withActivationLock } from '@aks-flex-node/lock';
import type { Logger } from '@aks-flex-node/log';
import { resetAgent, type ResetAgentOptions, type ResetReport } from './reset-agent.js';
import { createIpNetworkEffects } from './ip-network-effects.js';
import { createSystemdResetEffects, isSystemdBooted } from './systemd-reset-effects.js';

/**
 * The offline reset: the same sweep the daemon runs, under the same
 * activation lock, for when no daemon answers. A held lock is refused at once
 * (ACTIVATION_IN_PROGRESS) before anything is changed.
 */
export function resetAgentUnderLock(options: ResetAgentOptions): Promise<ResetReport> {
  return withActivationLock(
    {
      lockPath: options.paths.activationLock,
      goLockPath: options.paths.goUpgradeLock,
      log: options.log,
      purpose: 'a reset',
    },
    () => resetAgent(options),
  );
}

/** The production offline reset over `hostPaths`, through systemctl when systemd runs the host. */
export async function resetThisHost(log: Logger): Promise<ResetReport> {
  const effects = (await isSystemdBooted(hostPaths.prefix))
    ? createSystemdResetEffects(log)
    : undefined;
  return resetAgentUnderLock({
    paths: hostPaths,
    effects,
    network: createIpNetworkEffects(log),
    log,
  });
}
