import { isRegularExecutable } from '@aks-flex-node/fs';
import { AgentError, type Logger } from '@aks-flex-node/log';
import { legacySeedOf, type HostRootPaths } from './host-root-paths.js';
import { isLegacyReleased } from './is-legacy-released.js';
import { removeLegacySeed } from './remove-legacy-seed.js';

/**
 * Runs before every switch, the daemon's and a direct activation's. A release
 * that predates the host root, once it is switched to (a downgrade, or a
 * rollback target), adopts an executable at `/usr/local/bin/aks-flex-node`
 * as its own and builds a second layout under `/usr/local`; this release
 * refuses to run on a host installed under both roots, so such a rollback
 * would never start. So once nothing runs from the legacy root, a seeded
 * copy is removed, and anything else there that still runs (an operator's
 * link) refuses the switch. It sits beside `refuseUnfinishedMove`: both
 * are the legacy root's refusals of a switch.
 *
 * Throws UPGRADE_REFUSED.
 */
export async function guardLegacySeed(paths: HostRootPaths, log: Logger): Promise<void> {
  let released: boolean;
  try {
    released = await isLegacyReleased(paths);
  } catch (error) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `inspect the host root ${paths.root} before switching: it could not be read`,
      {
        path: paths.root,
        cause: error,
        hint: 'check the path with `ls -ld`, then retry the upgrade',
      },
    );
  }
  if (!released) return;
  // Kept while this process runs from it: a CLI an earlier release's install
  // script left there activating directly. No release that predates the host
  // root can be switched to (the candidate check refuses it), and the daemon
  // the switch starts, from the host root, removes the seed.
  if ((await removeLegacySeed(paths, log, process.execPath)) === 'kept-running') return;
  const seed = legacySeedOf(paths);
  if (await isRegularExecutable(seed)) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `${seed} still runs an agent binary; a release that predates the host root would adopt it after this switch`,
      {
        path: seed,
        hint: `remove ${seed}, or put a link to the agent in /usr/local/sbin instead, then retry`,
      },
    );
  }
}
