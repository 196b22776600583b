import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileSha256, makeIoError } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';
import { currentLinkFile, lastGoodLinkFile } from '@aks-flex-node/layout';
import { messageOf } from '@aks-flex-node/log';
import { resolveHostRoot } from '../resolve-host-root.js';
import type { HostRootMovePaths } from './move-paths.js';
import { loadRecordedDigests } from './digest-record.js';

/** Whether a linked host may move now; when not, a sentence for the log and `status`. */
export type MoveReadiness = { ready: true } | { ready: false; reason: string };

const slots = [
  ['current', currentLinkFile],
  ['last-good', lastGoodLinkFile],
] as const;

/**
 * Whether a linked host may move (spec hostroot §4.5 moveReady): no
 * AgentUpgrade awaits its report, and neither the current nor the last-good
 * binary predates the host root (each is in the digest record). Until then a
 * rollback could still start a release that needs its files under the legacy
 * root. Reads only. `hashed` holds digests already taken, by resolved path:
 * the running binary is usually `current`, and hashing 100 MB twice costs a
 * visible fraction of a second on a small host. Throws HOST_ROOT_IO when the signal, the record or a
 * binary cannot be read.
 */
export async function checkMoveReadiness(
  paths: HostRootMovePaths,
  hashed: ReadonlyMap<string, string> = new Map(),
): Promise<MoveReadiness> {
  if (await exists(paths.signalFile)) {
    return { ready: false, reason: 'an AgentUpgrade has not been reported yet' };
  }
  const recorded = await loadRecordedDigests(paths.digestRecord);
  const root = await resolveHostRoot(paths);
  const digests = new Map(hashed);
  for (const [slot, rel] of slots) {
    let target: string;
    try {
      target = await realpath(path.join(root, rel));
    } catch (error) {
      return { ready: false, reason: `the ${slot} binary does not resolve: ${messageOf(error)}` };
    }
    // current and last-good are one slot after a committed upgrade: hashed once.
    const digest = digests.get(target) ?? (await fileSha256(target));
    digests.set(target, digest);
    if (!recorded.has(digest)) {
      return {
        ready: false,
        reason: `the ${slot} binary ${target} predates the host root; the move follows the next AgentUpgrade`,
      };
    }
  }
  return { ready: true };
}

/** stat follows links: a signal reached through a link is still pending. */
async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw makeIoError('inspect', file, error, { object: '(the AgentUpgrade signal)' });
  }
}
