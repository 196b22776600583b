import { nspawnUnitNames, type NspawnMachine } from '@aks-flex-node/layout';
import { AgentError, messageOf } from '@aks-flex-node/log';
import type { HookLog } from './hook-log.js';

/** Runs `systemctl` with arguments; injectable so tests need no systemd. */
export type RunSystemctl = (args: string[]) => Promise<void>;

/**
 * The real `systemctl`, through execFile: the hook loads no command-runner
 * library. node:child_process is loaded here, not imported at the top,
 * because only reconcile runs a command and pre-start runs at every machine
 * start; getBuiltinModule rather than import(), which the executable's
 * bundles do not support (services/cli/src/roles/evaluate-common-js.ts).
 */
export const runSystemctl: RunSystemctl = (args) => {
  const { execFile } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve, reject) => {
    execFile('systemctl', args, (error, _stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(stderr.trim() === '' ? messageOf(error) : stderr.trim()));
    });
  });
};

/**
 * reconcile: restart the machine's unit, which runs both hooks again
 * (spec/daemon.md 6.3). No migration, nothing written.
 *
 * Throws SYSTEMD_FAILED.
 */
export async function runReconcile(
  machine: NspawnMachine,
  options: { systemctl: RunSystemctl; log: HookLog },
): Promise<number> {
  const unit = nspawnUnitNames.machine(machine);
  try {
    await options.systemctl(['restart', unit]);
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
