import { lstat, rm } from 'node:fs/promises';
import path from 'node:path';
import { agentBinaryPathsUnder } from '@aks-flex-node/agentbinary';
import { removeIfEmpty, removeOwned } from '@aks-flex-node/fs';
import { hostRootSubdirs, managedBinaryDir, type HostPaths } from '@aks-flex-node/layout';
import { isNotFound, type Logger } from '@aks-flex-node/log';

/**
 * What a failed `start` must take back: the paths its install may create,
 * each with whether it existed before. A start that fails halfway (ENOSPC
 * after the plain binary was copied, issue 28 item 6) would otherwise leave a
 * copy that makes every retry skip the seed and fail the same way.
 */
export interface StartLeftovers {
  /** Removes what this run created, deepest first, keeping everything that existed. */
  removeCreated(log: Logger): Promise<void>;
}

/**
 * Notes which of the install's paths exist now: the config, the host root
 * and, when the root exists, the files the install writes under it (both
 * roots: on a linked host the layout is under the legacy root). A root this
 * run creates is removed whole; the root's parent, the host's, only if empty.
 */
export async function noteStartLeftovers(paths: HostPaths): Promise<StartLeftovers> {
  const wholeTrees = [paths.root];
  const files = [paths.configFile];
  for (const root of [paths.root, paths.legacy]) {
    const layout = agentBinaryPathsUnder(root);
    files.push(layout.binary, layout.blue, layout.green, layout.current, layout.lastGood);
  }
  // Deepest first, so each is empty by the time it is tried. Under the legacy
  // root only the agent's own directory: bin and lib there are the host's.
  const dirs = [
    agentBinaryPathsUnder(paths.legacy).slotDir,
    ...[managedBinaryDir, 'lib', ...hostRootSubdirs()].map((sub) => path.join(paths.root, sub)),
    paths.parent,
  ];
  const existed = new Set<string>();
  for (const target of [...wholeTrees, ...files, ...dirs]) {
    if (await isPresent(target)) existed.add(target);
  }
  return {
    removeCreated: async (log) => {
      for (const tree of wholeTrees.filter((tree) => !existed.has(tree))) {
        await rm(tree, { recursive: true, force: true });
        log.info({ path: tree }, 'removed what the failed start created');
      }
      for (const file of files.filter((file) => !existed.has(file))) {
        if (!(await isPresent(file))) continue;
        await removeOwned(file);
        log.info({ path: file }, 'removed what the failed start created');
      }
      for (const dir of dirs.filter((dir) => !existed.has(dir))) await removeIfEmpty(dir);
    },
  };
}

async function isPresent(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
