import { nspawnUnitNames, type NspawnMachine } from '@aks-flex-node/layout';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { createSystemctl, runBuiltin, type Systemctl } from '@aks-flex-node/systemd';
import type { HookLog } from './hook-log.js';

/** The systemctl call reconcile makes; tests pass a fake, so they need no systemd. */
export type ReconcileSystemctl = Pick<Systemctl, 'restart'>;

/**
 * The real one: the systemctl wrapper over the hot roles' runner, so the hook
 * loads no execa (shared/fs/src/run-builtin.ts says why). Its debug lines go
 * nowhere: the hook logs its own outcome.
 */
export function hookSystemctl(): ReconcileSystemctl {
  return createSystemctl({ log: { debug: () => undefined }, run: runBuiltin });
}

/**
 * reconcile: restart the machine's unit, which runs both hooks again
 * (spec/daemon.md 6.3). No migration, nothing written.
 *
 * Throws SYSTEMD_FAILED.
 */
export async function runReconcile(
  machine: NspawnMachine,
  options: { systemctl: ReconcileSystemctl; log: HookLog },
): Promise<number> {
  const unit = nspawnUnitNames.machine(machine);
  try {
    await options.systemctl.restart(unit);
  } catch (error) {
    throw new AgentError('SYSTEMD_FAILED', `restart ${unit}: ${messageOf(error)}`, {
      path: unit,
      cause: error,
      hint: `see why with \`systemctl status ${unit}\` and \`journalctl -u ${unit}\``,
    });
  }
  options.log.info(`restarted ${unit}; its hooks ran again`);
  return 0;
}
