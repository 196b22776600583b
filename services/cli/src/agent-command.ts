import path from 'node:path';
import { binaryFile, hostPaths } from '@aks-flex-node/layout';

/**
 * A command line an operator can run as printed: the agent binary by its full
 * path under the host root, since a bare `aks-flex-node` is on no PATH once
 * the install script's copy in /usr/local/bin is gone.
 */
export function agentCommand(args: string): string {
  return `${path.join(hostPaths.root, binaryFile)} ${args}`;
}
