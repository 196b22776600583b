import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { agentBinaryPathsUnder, type AgentBinaryPaths } from '@aks-flex-node/agentbinary';
import { resolveHostRoot, type HostRootPaths } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';

/**
 * The layout a recovering last-good binary restores. When it runs from a
 * slot (`<root>/lib/aks-flex-node/aks-flex-node-{blue,green}`), that root's
 * layout is the one it belongs to, whatever the host root resolves to now;
 * otherwise (a look-alike name, or an unknown path) the resolved host root's.
 */
export async function recoveryLayout(
  executable?: string,
  paths: HostRootPaths = hostPaths,
): Promise<AgentBinaryPaths> {
  const own = executable ?? (await realpath(process.execPath).catch(() => undefined));
  if (own !== undefined) {
    const root = path.dirname(path.dirname(path.dirname(own)));
    const layout = agentBinaryPathsUnder(root);
    if (own === layout.blue || own === layout.green) return layout;
  }
  return agentBinaryPathsUnder(await resolveHostRoot(paths));
}
