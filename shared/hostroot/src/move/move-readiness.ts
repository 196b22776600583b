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
 * What readiness needs to know before any binary is read: the signal is
 * absent and both slots resolve. Then `targets` holds each slot's resolved
 * binary, which {@link judgeMoveReadiness} wants hashed.
 */
export type MoveSlots =
  | { ready: false; reason: string }
  | { ready: true; targets: ReadonlyArray<readonly [slot: string, target: string]> };

/**
 * The cheap half of readiness (spec hostroot §4.5 moveReady): no AgentUpgrade
 * awaits its report, and current and last-good resolve. Reads only. Throws
 * HOST_ROOT_IO when the signal cannot be inspected.
 */
export async function resolveMoveSlots(paths: HostRootMovePaths): Promise<MoveSlots> {
  if (await exists(paths.signalFile)) {
    return { ready: false, reason: 'an AgentUpgrade has not been reported yet' };
  }
  const root = await resolveHostRoot(paths);
  const targets: Array<readonly [string, string]> = [];
  for (const [slot, rel] of slots) {
    try {
      targets.push([slot, await realpath(path.join(root, rel))]);
    } catch (error) {
      return { ready: false, reason: `the ${slot} binary does not resolve: ${messageOf(error)}` };
    }
  }
  return { ready: true, targets };
}

/**
 * The other half: neither the current nor the last-good binary predates the
 * host root (each one's digest, from `digests` by resolved path, is in the
 * record). Until then a rollback could still start a release that needs its
 * files under the legacy root. Throws HOST_ROOT_IO when the record cannot be
 * read, and when a target has no digest in `digests` (a caller's mistake).
 */
export async function judgeMoveReadiness(
  paths: HostRootMovePaths,
  targets: MoveSlots & { ready: true },
  digests: ReadonlyMap<string, string>,
): Promise<MoveReadiness> {
  const recorded = await loadRecordedDigests(paths.hostRootAgentDigests);
  for (const [slot, target] of targets.targets) {
    const digest = digests.get(target);
    if (digest === undefined) throw makeIoError('judge', target, new Error('it was not hashed'));
    if (!recorded.has(digest)) {
      return {
        ready: false,
        reason: `the ${slot} binary ${target} predates the host root; the move follows the next AgentUpgrade`,
      };
    }
  }
  return { ready: true };
}

/**
 * Whether a linked host may move: {@link resolveMoveSlots}, then
 * {@link judgeMoveReadiness} over digests taken here. Reads only. `hashed`
 * holds digests already taken, by resolved path (the running binary is
 * usually `current`); current and last-good are one file after a committed
 * upgrade, hashed once. Throws HOST_ROOT_IO when the signal, the record or a
 * binary cannot be read.
 */
export async function checkMoveReadiness(
  paths: HostRootMovePaths,
  hashed: ReadonlyMap<string, string> = new Map(),
): Promise<MoveReadiness> {
  const slotsNow = await resolveMoveSlots(paths);
  if (!slotsNow.ready) return slotsNow;
  const digests = new Map(hashed);
  for (const [, target] of slotsNow.targets) {
    if (!digests.has(target)) digests.set(target, await fileSha256(target));
  }
  return judgeMoveReadiness(paths, slotsNow, digests);
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
