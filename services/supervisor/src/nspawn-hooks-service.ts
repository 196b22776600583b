import type { RegenerateNspawnHooksResponse } from '@aks-flex-node/api';
import { isHostRootSettled, migrateAndDescribe, resolveHostRoot } from '@aks-flex-node/hostroot';
import { hostRootMarkers, type HostPaths, type NspawnMachine } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { currentNspawnHooks, rewriteNspawnHooks } from '@aks-flex-node/nspawn';
import type { Systemctl } from '@aks-flex-node/systemd';
import type { NspawnHooksService } from './deps.js';

/** What {@link createNspawnHooksService} needs. */
export interface NspawnHooksServiceOptions {
  paths: HostPaths;
  log: Logger;
  /** The running executable, installed as the helper before the hooks name it. */
  executable: () => Promise<string>;
  /** Given when systemd runs the daemon; a daemon started by hand writes but does not reload. */
  systemctl?: Pick<Systemctl, 'daemonReload'>;
  /** Whether a mutation runs now: this daemon's, or another process's holding the activation lock. */
  mutationRunning: () => Promise<boolean>;
}

/**
 * The daemon's side of the nspawn pre-start hook (spec/daemon.md 6.3):
 * migrate the host root first (the hooks name the helper under it, so the
 * root must lead to the files), then install the helper and rewrite the
 * machine's hooks under the root as it resolves now, then reload systemd so
 * the machine's start runs the rewritten override. The caller holds the
 * activation lock, which keeps it apart from a move or an upgrade.
 */
export function createNspawnHooksService(options: NspawnHooksServiceOptions): NspawnHooksService {
  const { paths, log } = options;
  return {
    unchanged: async (machine: NspawnMachine) => {
      // While a mutation runs, the request queues for the lock as it always
      // did, and is refused: what a move or an upgrade is changing is not
      // judged from outside it.
      if (await options.mutationRunning()) return undefined;
      if (!(await isHostRootSettled(paths, hostRootMarkers()))) return undefined;
      const root = await resolveHostRoot(paths);
      const helper = await currentNspawnHooks(root, paths, machine, await options.executable());
      if (helper === undefined) return undefined;
      log.info(
        { machine, root, helper },
        'the nspawn hooks for pre-start are current: nothing to write, no lock taken',
      );
      return { machine, migratedFrom: 'installed', root, helper, changed: false, reloaded: false };
    },
    regenerate: async (machine: NspawnMachine): Promise<RegenerateNspawnHooksResponse> => {
      const migrated = await migrateAndDescribe(paths, log);
      const root = migrated.after.resolved;
      const hooks = await rewriteNspawnHooks(root, paths, log, {
        executable: await options.executable(),
        machines: [machine],
      });
      const reloaded = hooks.changed && options.systemctl !== undefined;
      if (reloaded) await options.systemctl?.daemonReload();
      log.info(
        { machine, root, helper: hooks.helper, changed: hooks.changed, reloaded },
        'regenerated the nspawn hooks for pre-start',
      );
      return {
        machine,
        migratedFrom: migrated.before,
        root,
        helper: hooks.helper,
        changed: hooks.changed,
        reloaded,
      };
    },
  };
}
