import type { ExecutableCopy } from '@aks-flex-node/agentbinary';
import type { HostPaths } from '@aks-flex-node/layout';
import { messageOf, type Logger } from '@aks-flex-node/log';
import {
  installNspawnLifecycleHelper,
  rewriteLocalDnsUnit,
  rewriteNspawnHooks,
} from '@aks-flex-node/nspawn';
import type { Systemctl } from '@aks-flex-node/systemd';

// What each daemon start refreshes from the running binary besides its own
// layout. Each returns its failure instead of throwing: the daemon starts
// anyway, but a pending AgentUpgrade's judgement fails on it and status
// lists it (issue 28 item 5), so a stale helper never passes for success.

/**
 * Installs this release's nspawn lifecycle helper at every start (upstream
 * #378), so the hooks never run a helper an earlier release left. Not fatal
 * to the start (a failed start counts toward the start limit and could roll
 * back a healthy binary over a helper the machines can still run), but never
 * silent: returns the failure, which fails a pending upgrade's judgement (the
 * upgrade rolls back to the binary the helper still is) and shows in status.
 */
export async function refreshNspawnLifecycleHelper(
  paths: HostPaths,
  log: Logger,
  executable: string,
  executableCopy?: ExecutableCopy,
): Promise<string | undefined> {
  try {
    await installNspawnLifecycleHelper(paths, log, executable, executableCopy);
    return undefined;
  } catch (error) {
    log.error(
      { err: error },
      'could not install the nspawn lifecycle helper; the machines keep the helper they have',
    );
    return `could not refresh the nspawn lifecycle helper from ${executable}: ${messageOf(error)}; the next daemon start retries`;
  }
}

/**
 * Points the Go library's LocalDNS unit at the host root's helper on a moved
 * host (`root`, the installed root as it resolves). Builds before this one
 * moved hosts without rewriting that unit, so it still names the `/usr/local`
 * helper the move removed and the machines' DNS fails at the next boot; the
 * move never runs again on such a host, so each start checks. The caller
 * runs it only on an installed root: a move under way rewrites the unit
 * itself, and a linked host's unit names a helper that is still there.
 * Not fatal, and not silent, as for the helper above: returns the failure.
 */
export function repairLocalDnsUnit(
  paths: HostPaths,
  root: string,
  log: Logger,
  systemctl: Pick<Systemctl, 'daemonReload'> | undefined,
): Promise<string | undefined> {
  return repairTowardRoot(() => rewriteLocalDnsUnit(root, paths, log), {
    log,
    systemctl,
    lost: 'could not point the LocalDNS unit at the host root; the machines keep the unit they have',
    failure: `could not point the LocalDNS unit at the host root ${root}`,
  });
}

/**
 * Points the machines' hooks at the host root's helper on an installed root
 * (`root`, as it resolves), as {@link repairLocalDnsUnit} does for the
 * LocalDNS unit. The move rewrites them, but a host installed fresh beside
 * machines an earlier release provisioned (its helper under /usr/local, the
 * agent installed by install.sh and never moved) kept hooks naming a helper
 * this product never installs or refreshes there, so a machine's next start
 * ran a stale or missing one. Unchanged hooks are not written. Not fatal,
 * and not silent: returns the failure.
 */
export function repairNspawnHooks(
  paths: HostPaths,
  root: string,
  log: Logger,
  executable: string,
  systemctl: Pick<Systemctl, 'daemonReload'> | undefined,
): Promise<string | undefined> {
  return repairTowardRoot(() => rewriteNspawnHooks(root, paths, log, { executable }), {
    log,
    systemctl,
    lost: "could not point the machines' hooks at the host root's helper; the machines keep the hooks they have",
    failure: `could not point the nspawn machines' hooks at the host root ${root}`,
  });
}

/**
 * Runs one of the rewrites above, reloading systemd when it changed a unit
 * file; its failure is logged (`lost`) and returned (`failure`, with the
 * cause and the retry) instead of thrown.
 */
async function repairTowardRoot(
  rewrite: () => Promise<{ changed: boolean } | undefined>,
  on: {
    log: Logger;
    systemctl: Pick<Systemctl, 'daemonReload'> | undefined;
    lost: string;
    failure: string;
  },
): Promise<string | undefined> {
  try {
    const rewritten = await rewrite();
    if (rewritten?.changed === true) await on.systemctl?.daemonReload();
    return undefined;
  } catch (error) {
    on.log.error({ err: error }, on.lost);
    return `${on.failure}: ${messageOf(error)}; the next daemon start retries`;
  }
}
