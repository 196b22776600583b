import path from 'node:path';
import {
  agentBinaryPathsUnder,
  serviceAssetsForHost,
  writeServiceAssets,
} from '@aks-flex-node/agentbinary';
import { exists, syncDirectory } from '@aks-flex-node/fs';
import { systemMoveHost, type MoveHost } from '@aks-flex-node/hostroot';
import { unitNames, type HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { rewriteLocalDnsUnit } from '@aks-flex-node/nspawn';
import type { Systemctl } from '@aks-flex-node/systemd';
import type { RestartExecutor } from '../upgrade/restart-executor.js';

/**
 * The nspawn lifecycle step of a unit rewrite: install this release's helper
 * at `<root>/bin/unbounded-agent-nspawn-lifecycle` from the running binary,
 * then the hooks (regenerate-config unit, `systemd-nspawn@MACHINE.service.d`
 * override) naming it. The daemon supplies it; a daemon built without it
 * skips the step with a log line saying so.
 */
export type NspawnHookRefresh = (root: string) => Promise<void>;

/** What {@link createDaemonMoveHost} needs. */
export interface DaemonMoveHostDeps {
  paths: HostPaths;
  log: Logger;
  /** Present when systemd runs the daemon: then it reloads after a rewrite. */
  systemctl?: Pick<Systemctl, 'daemonReload'>;
  restart: RestartExecutor;
  refreshNspawnHooks?: NspawnHookRefresh;
}

/**
 * The move's host as the daemon supplies it: the real probes of shared/hostroot
 * plus the two effects only the daemon has, rewriting its units at a root and
 * queueing its own restart.
 */
export function createDaemonMoveHost(deps: DaemonMoveHostDeps): MoveHost {
  return systemMoveHost({
    rewriteUnits: (root) => rewriteUnitsAt(deps, root),
    // The restart executor runs `systemctl reset-failed` on the agent unit
    // first (best effort), so the planned restart is not refused by the start limit.
    queueRestart: () => deps.restart.scheduleRestart("restart from the host root's copy"),
  });
}

/**
 * Points the agent unit, the recovery unit and script, and the upgrade guard
 * at `root` (dependencies first, as at every start), then the nspawn hooks
 * and the LocalDNS unit, reloads systemd, and syncs the directories so the renames are durable
 * before pass 2 removes what the old units named. Idempotent: it runs on
 * both passes and in the undo.
 */
async function rewriteUnitsAt(deps: DaemonMoveHostDeps, root: string): Promise<void> {
  const { paths, log } = deps;
  const binaryPaths = agentBinaryPathsUnder(root);
  // A daemon started by hand on a host without our units leaves units alone,
  // as convergeHostInstall does; one whose unit exists must keep it runnable.
  const ownsUnits =
    deps.systemctl !== undefined || (await exists(path.join(paths.unitDir, unitNames.agent)));
  if (ownsUnits) {
    await writeServiceAssets(await serviceAssetsForHost(paths, binaryPaths), log);
  }
  if (deps.refreshNspawnHooks === undefined) {
    log.warn(
      { root },
      'this build has no nspawn lifecycle step: the nspawn hooks are not rewritten',
    );
  } else {
    await deps.refreshNspawnHooks(root);
  }
  // Whether or not this product wrote the agent's units: a Go release's
  // LocalDNS unit names the legacy helper, which pass 2 removes.
  await rewriteLocalDnsUnit(root, paths, log);
  await deps.systemctl?.daemonReload();
  if (ownsUnits) {
    await syncDirectory(paths.unitDir);
    await syncDirectory(path.dirname(binaryPaths.recoveryScript));
  }
  log.info({ root }, "pointed the agent's units at the host root");
}
