import path from 'node:path';
import { exists, removeIfExists } from '@aks-flex-node/fs';
import { unitNames, type HostPaths } from '@aks-flex-node/layout';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { Systemctl } from '@aks-flex-node/systemd';

/**
 * The units only this product has: no Go release writes, starts or removes
 * them (its reset removes the agent and recovery units alone, spec daemon
 * 8.2). The agent unit of this product requires the socket and pulls in the
 * guard; a Go release's agent unit names neither.
 */
export const productOnlyUnits: readonly string[] = [unitNames.agentSocket, unitNames.upgradeGuard];

/** What {@link retireProductOnlyUnits} asks of systemd. */
export type RetireSystemctl = Pick<Systemctl, 'daemonReload' | 'disableNow'>;

/**
 * When the host is handed back to another release (a Go candidate, a Go
 * last-good by rollback or recovery, a downgrade): the socket is stopped and
 * disabled, and the socket and guard unit files removed, so that release's
 * reset leaves nothing of this product behind, and a client connecting to
 * the socket does not start the agent unit through socket activation while
 * a daemon runs that never accepts on it. Call it once the agent unit no
 * longer requires the socket (the other release's unit is written and
 * systemd reloaded): stopping a socket its running service requires would
 * stop the service too. Stopping the socket does not stop the daemon it
 * passed its listener to, which keeps serving until its restart. This
 * product's next start writes them again (the socket's start is pulled in by
 * its agent unit's Requires=). Returns whether anything changed.
 *
 * Throws HOST_ROOT_IO naming the unit and the commands to run by hand.
 */
export async function retireProductOnlyUnits(
  hostPaths: HostPaths,
  systemctl: RetireSystemctl,
  log: Logger,
): Promise<boolean> {
  let changed = false;
  for (const unit of productOnlyUnits) {
    const file = path.join(hostPaths.unitDir, unit);
    if (!(await exists(file))) continue;
    try {
      // The socket listens (and is enabled in sockets.target) until stopped;
      // the guard is started only by this product's agent unit and exits at once.
      if (unit === unitNames.agentSocket) await systemctl.disableNow(unit);
      await removeIfExists(file);
    } catch (error) {
      throw new AgentError(
        'HOST_ROOT_IO',
        `retire ${unit} before handing the host to another release: ${messageOf(error)}`,
        {
          path: file,
          cause: error,
          hint: `run \`systemctl disable --now ${unit} && rm -f ${file} && systemctl daemon-reload\`; the other release's reset does not remove it`,
        },
      );
    }
    log.info({ path: file }, 'removed a unit only this product uses: another release runs now');
    changed = true;
  }
  if (changed) await systemctl.daemonReload();
  return changed;
}
