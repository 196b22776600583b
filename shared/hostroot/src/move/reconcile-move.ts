import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { fileSha256 } from '@aks-flex-node/fs';
import { hostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { parentOf, type HostRootPaths } from '../host-root-paths.js';
import { hostRootState } from '../host-root-state.js';
import { completeMove } from './complete-move.js';
import { addRecordedDigest } from './digest-record.js';
import type { MoveHost } from './move-host.js';
import type { HostRootMovePaths } from './move-paths.js';
import { checkMoveReadiness } from './move-readiness.js';
import { resolveMoveSettings, type MoveOptions, type MoveSettings } from './move-settings.js';
import { swapInCopy } from './swap-in-copy.js';

/**
 * What one call of {@link reconcileHostRootMove} did, and so what the caller
 * does next:
 * - `left-alone`: the root is absent, installed or an operator's; nothing was
 *   touched and nothing recorded. Open the gate.
 * - `not-ready` / `skipped-noexec`: the host stays linked, nothing copied;
 *   log `reason`, show it in `status`, open the gate. The next start retries.
 * - `restart-queued`: pass 1 is done and the restart from the copy is
 *   queued. Take no more work, keep the gate shut, and exit (non-zero) if not
 *   replaced within two minutes; the next start runs pass 2.
 * - `moved`: pass 2 is done; the root is installed and the legacy root
 *   released, so the legacy seed may go now. Open the gate.
 */
export type MoveOutcome =
  | { kind: 'left-alone'; state: 'absent' | 'installed' | 'other' }
  | { kind: 'not-ready'; reason: string }
  | { kind: 'skipped-noexec'; reason: string }
  | { kind: 'restart-queued' }
  | { kind: 'moved' };

/**
 * Moves a host an earlier release installed under the legacy root into a
 * real host root, across two daemon starts (spec hostroot §4.3). Call it
 * after Migrate, under the activation lock, once the daemon has written its
 * own service assets and judged any pending AgentUpgrade. Every prefix of it
 * is a state the next call finishes or undoes.
 *
 * Throws (log it, never fail the start; the next start retries): NOT_EXECUTABLE
 * when the copy cannot run and the host was linked again; HOST_ROOT_IO for a
 * failure of its own; whatever `host.rewriteUnits` or `host.queueRestart`
 * threw, unchanged. After a throw the state is `linked` or `moving`; while it
 * is `moving` (see {@link isHostRootMoveUnfinished}) keep the gate shut.
 */
export async function reconcileHostRootMove(
  paths: HostRootMovePaths,
  log: Logger,
  host: MoveHost,
  options: MoveOptions = {},
): Promise<MoveOutcome> {
  const settings = resolveMoveSettings(options);
  const state = await hostRootState(paths);
  switch (state) {
    case 'absent':
    case 'installed':
    case 'other':
      return { kind: 'left-alone', state };
    case 'moving': {
      const self = await host.executable();
      log.info({ root: paths.root, self }, "finishing the move of the agent's files");
      // The record is not updated here: only a linked host reads it.
      return { kind: await completeMove(paths, log, host, settings, self) };
    }
    case 'linked':
      return moveLinkedHost(paths, log, host, settings);
  }
}

async function moveLinkedHost(
  paths: HostRootMovePaths,
  log: Logger,
  host: MoveHost,
  settings: MoveSettings,
): Promise<MoveOutcome> {
  const self = await host.executable();
  const selfDigest = await fileSha256(self);
  // Before readiness: the running binary then always counts as known.
  await addRecordedDigest(paths.digestRecord, selfDigest);
  failpoint(failpoints.moveDigestRecorded);
  const readiness = await checkMoveReadiness(paths, new Map([[self, selfDigest]]));
  if (!readiness.ready) {
    log.info({ root: paths.root, reason: readiness.reason }, 'not moving the host root yet');
    return { kind: 'not-ready', reason: readiness.reason };
  }
  // The copy goes beside the root, on the parent's filesystem. Verify would
  // catch noexec too, but only after a whole copy, at every start.
  const parent = parentOf(paths);
  const mount = await host.probeMount(parent);
  if (mount.noexec) {
    const reason = `${mount.mountPoint} is mounted noexec, so the agent cannot run from ${paths.root}; it stays linked to ${paths.legacy}, healthy where it is`;
    log.warn(
      { root: paths.root, parent, mountPoint: mount.mountPoint },
      'not moving the host root',
    );
    return { kind: 'skipped-noexec', reason };
  }
  log.info(
    { root: paths.root, legacy: paths.legacy },
    "moving the agent's files into the host root",
  );
  await swapInCopy(paths, log, settings.files);
  return { kind: await completeMove(paths, log, host, settings, self) };
}

/**
 * Whether a move has swapped its copy in and not finished (a real root that
 * still holds `.moving`). While it has, the daemon takes no work, and staging
 * and direct activation refuse: the legacy files are a whole installation a
 * release before the host root would run from. Throws HOST_ROOT_IO when the
 * root cannot be inspected.
 */
export async function isHostRootMoveUnfinished(paths: HostRootPaths): Promise<boolean> {
  return (await hostRootState(paths)) === 'moving';
}

/** {@link reconcileHostRootMove} on the production paths (`/opt/unbounded/agent`, `/usr/local`); throws as it does. */
export function reconcileMove(log: Logger, host: MoveHost): Promise<MoveOutcome> {
  return reconcileHostRootMove(hostPaths, log, host);
}
