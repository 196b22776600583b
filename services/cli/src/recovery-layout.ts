import path from 'node:path';
import {
  agentBinaryPathsUnder,
  type AgentBinaryPaths,
  type Host,
} from '@aks-flex-node/agentbinary';
import { resolveHostRoot, type HostRootPaths } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';

/**
 * The layout a recovering last-good binary restores. When it runs from a
 * slot (`<root>/lib/aks-flex-node/aks-flex-node-{blue,green}`), that root's
 * layout is the one it belongs to, whatever the host root resolves to now;
 * otherwise (a look-alike name, or an unknown path) the resolved host root's.
 * `own` is the running executable, undefined when it could not be resolved.
 */
export async function recoveryLayout(
  own: string | undefined,
  paths: HostRootPaths = hostPaths,
): Promise<AgentBinaryPaths> {
  if (own !== undefined) {
    const root = path.dirname(path.dirname(path.dirname(own)));
    const layout = agentBinaryPathsUnder(root);
    if (own === layout.blue || own === layout.green) return layout;
  }
  return agentBinaryPathsUnder(await resolveHostRoot(paths));
}

/**
 * The running executable for {@link recoveryLayout}, or undefined when it
 * cannot be resolved: recovery must go on then, from the resolved host root.
 */
export function ownExecutable(host: Pick<Host, 'runningExecutable'>): Promise<string | undefined> {
  return host.runningExecutable().catch(() => undefined);
}
