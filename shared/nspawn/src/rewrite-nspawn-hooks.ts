import { serviceAssetsAreWritten, writeServiceAssets } from '@aks-flex-node/agentbinary';
import { exists } from '@aks-flex-node/fs';
import { nspawnMachines, type HostPaths, type NspawnMachine } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import {
  installNspawnLifecycleHelperUnder,
  isNspawnLifecycleHelperCurrent,
  nspawnLifecycleHelperUnder,
} from './install-nspawn-lifecycle-helper.js';
import { nspawnHookFiles } from './nspawn-hook-files.js';
import { renderNspawnHooks } from './render-nspawn-hooks.js';

/** Options for {@link rewriteNspawnHooks}. */
export interface RewriteNspawnHooksOptions {
  /** The running executable, installed as the helper before any hook names it. */
  executable: string;
  /**
   * The machines whose hooks to write. By default, those that have hooks on
   * the host already: a host without nspawn machines gets none.
   */
  machines?: readonly NspawnMachine[];
}

/** What {@link rewriteNspawnHooks} did. */
export interface RewrittenNspawnHooks {
  /** The helper every written hook names. */
  helper: string;
  machines: NspawnMachine[];
  /** Whether a hook file changed; the caller reloads systemd only then. */
  changed: boolean;
}

/**
 * The helper when {@link rewriteNspawnHooks} for `machine` under `root` would
 * change nothing: the helper is already the running executable and the
 * machine's hook files hold what would be written. Reads only, so it needs
 * no lock: a file another process replaces meanwhile is read whole, before
 * or after (every writer renames), and either way the answer is what a
 * machine starting then would have run. Undefined when something would change.
 */
export async function currentNspawnHooks(
  root: string,
  paths: Pick<HostPaths, 'unitDir'>,
  machine: NspawnMachine,
  executable: string,
): Promise<string | undefined> {
  if (!(await isNspawnLifecycleHelperCurrent(root, executable))) return undefined;
  const helper = nspawnLifecycleHelperUnder(root);
  const hooks = renderNspawnHooks(paths, machine, helper);
  return (await serviceAssetsAreWritten(hooks)) ? helper : undefined;
}

/**
 * Points the nspawn hooks at the helper under `root` (a resolved root: the
 * host root, the move's copy, or the legacy root during an undo). The helper
 * is installed from the running executable first (spec/daemon.md 6.4): the
 * helper a move copies is the earlier release's, whose pre-start would point
 * the hooks back at a path the move deletes. Idempotent; each file is written
 * atomically and durably. It does not reload systemd: the move reloads once
 * after all its units, the pre-start route after this.
 */
export async function rewriteNspawnHooks(
  root: string,
  paths: Pick<HostPaths, 'unitDir'>,
  log: Logger,
  options: RewriteNspawnHooksOptions,
): Promise<RewrittenNspawnHooks> {
  const machines = [...(options.machines ?? (await machinesWithHooks(paths)))];
  const helper = await installNspawnLifecycleHelperUnder(root, log, options.executable);
  let changed = false;
  for (const machine of machines) {
    if (await writeServiceAssets(renderNspawnHooks(paths, machine, helper), log)) changed = true;
  }
  return { helper, machines, changed };
}

/** The known machines that have either hook file on the host. */
export async function machinesWithHooks(
  paths: Pick<HostPaths, 'unitDir'>,
): Promise<NspawnMachine[]> {
  const found: NspawnMachine[] = [];
  for (const machine of nspawnMachines) {
    const files = nspawnHookFiles(paths, machine);
    if ((await exists(files.regenerateConfigUnit)) || (await exists(files.overrideFile))) {
      found.push(machine);
    }
  }
  return found;
}
