import path from 'node:path';
import { mountFacts, type MountFactsOptions } from '@aks-flex-node/fs';
import { stopAgentCommand } from '@aks-flex-node/layout';

/**
 * What an operator does when reset cannot remove `target` because its
 * directory is read-only: remount the mount that holds it (found in
 * mountinfo, so `/usr` on a host whose `/usr` is read-only, `/usr/local`
 * where that is its own mount), and stop the agent, whose unit sandbox can
 * keep the path read-only for the daemon alone. When the mount cannot be
 * told, the hint names the directory and says how to find it.
 */
export async function readOnlyRemovalHint(
  target: string,
  options: MountFactsOptions = {},
): Promise<string> {
  const dir = path.dirname(target);
  const remount = await mountFacts(dir, options).then(
    ({ mountPoint }) => `remount it read-write (\`mount -o remount,rw ${mountPoint}\`)`,
    // The removal already failed; a hint without the mount point is still a hint.
    () => `remount the filesystem holding it read-write (\`findmnt -T ${dir}\` names it)`,
  );
  return `${dir} is read-only here: ${remount}, stop the agent, whose sandbox may keep it read-only (\`${stopAgentCommand}\`), then run \`aks-flex-node reset\` again`;
}
