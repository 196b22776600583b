import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout this harness belongs to; scripts and the built product are
 * found from here. The sandbox runs the harness as a bundle outside the
 * checkout, where this file's own location says nothing, so it names the
 * checkout in AKS_FLEX_NODE_REPO_ROOT.
 */
export const repoRoot =
  process.env.AKS_FLEX_NODE_REPO_ROOT ??
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Builds or reuses the cached rootfs and prints its path (scripts/test-all.sh starts it early too). */
export const rootfsScript = path.join(repoRoot, 'scripts/e2e-rootfs.sh');

/**
 * Throwaway machines live here, one directory each (overlay upper, work and
 * mount point, console log, owner record). Outside the checkout so that a
 * left-over mount never ends up under a `git clean` or an editor's file
 * watcher, and under /var/tmp because a machine's upper dir must survive
 * the machine's reboot.
 */
export const machinesDir = process.env.AKS_FLEX_NODE_E2E_MACHINES ?? '/var/tmp/aks-flex-node-e2e';
