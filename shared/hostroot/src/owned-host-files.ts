import path from 'node:path';
import { hostLayoutFiles } from '@aks-flex-node/layout';
import type { HostRootPaths } from './host-root-paths.js';

/**
 * Every host file outside the config dir that the agent installs: the layout
 * under the host root, then under the legacy root. Teardown sweeps both on
 * every host, because reset is what operators run when migrate refuses. On a
 * linked host the root's entries reach the legacy files through the link,
 * and the legacy entries then find nothing. Unlike the Go agent there are no
 * installer scripts left under `<legacy>/bin`: AKS Flex Node's scripts run
 * from a download and are not kept on the host.
 */
export function ownedHostFiles(paths: HostRootPaths): string[] {
  const under = (root: string): string[] => hostLayoutFiles().map((file) => path.join(root, file));
  return [...under(paths.root), ...under(paths.legacy)];
}
