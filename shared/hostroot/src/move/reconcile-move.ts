import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { rm } from 'node:fs/promises';
import { makeIoError } from '@aks-flex-node/fs';
import { hostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { parentOf, stagingOf, type HostRootPaths } from '../host-root-paths.js';
import { hostRootState } from '../host-root-state.js';
import { completeMove } from './complete-move.js';
import { addRecordedDigest } from './digest-record.js';
import type { MoveHost } from './move-host.js';
import type { HostRootMovePaths } from './move-paths.js';
import { sha256InWorkers } from './hash-in-workers.js';
import { hasRoomForSpeculativeCopy } from './speculative-copy-room.js';
import { judgeMoveReadiness, resolveMoveSlots } from './move-readiness.js';
import { resolveMoveSettings, type MoveOptions, type MoveSettings } from './move-settings.js';
import { stageLegacyFiles } from './stage-legacy-files.js';
import { swapInStagedCopy } from './swap-in-copy.js';

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
  const slots = await resolveMoveSlots(paths);
  // The copy goes beside the root, on the parent's filesystem. Verify would
  // catch noexec too, but only after a whole copy, at every start.
  const parent = parentOf(paths);
  const mount = slots.ready ? await settle(host.probeMount(parent)) : undefined;
  // The copy is staged while the binaries are hashed (in workers, so the
  // API keeps answering), and only swapped in once readiness allows it; a
  // host that is not ready discards it. Staging is never trusted by a later
  // attempt, so a crash anywhere here leaves nothing to undo. Only where the
  // filesystem has room for the copy twice over: a copy that may be thrown
  // away must never fill the disk other services write to, so a tight host
  // hashes first and copies only once it is ready, as a slower move would.
  const mountAllowsCopy = mount?.status === 'fulfilled' && !mount.value.noexec;
  const willStage =
    mountAllowsCopy && (await hasRoomForSpeculativeCopy(parent, paths.legacy, settings.files, log));
  if (willStage) {
    log.info(
      { root: paths.root, legacy: paths.legacy },
      "copying the agent's files beside the host root while readiness is judged",
    );
  }
  const staging = willStage ? settle(stageLegacyFiles(paths, settings.files)) : undefined;
  const targets = slots.ready ? slots.targets.map(([, target]) => target) : [];
  const hashed = await settle(sha256InWorkers([self, ...targets]));
  const staged = await staging;
  if (hashed.status === 'rejected') {
    if (staging !== undefined) await discardStaging(paths);
    throw hashed.reason;
  }
  // Before readiness: the running binary then always counts as known.
  await addRecordedDigest(paths.hostRootAgentDigests, hashed.value.get(self) as string);
  failpoint(failpoints.moveDigestRecorded);
  const readiness = slots.ready ? await judgeMoveReadiness(paths, slots, hashed.value) : slots;
  if (!readiness.ready) {
    if (staging !== undefined) await discardStaging(paths);
    log.info({ root: paths.root, reason: readiness.reason }, 'not moving the host root yet');
    return { kind: 'not-ready', reason: readiness.reason };
  }
  if (mount?.status === 'rejected') throw mount.reason;
  if (mount?.value.noexec === true) {
    const reason = `${mount.value.mountPoint} is mounted noexec, so the agent cannot run from ${paths.root}; it stays linked to ${paths.legacy}, healthy where it is`;
    log.warn(
      { root: paths.root, parent, mountPoint: mount.value.mountPoint },
      'not moving the host root',
    );
    return { kind: 'skipped-noexec', reason };
  }
  if (staged?.status === 'rejected') throw staged.reason;
  if (staged === undefined) await stageLegacyFiles(paths, settings.files);
  log.info(
    { root: paths.root, legacy: paths.legacy },
    "moving the agent's files into the host root",
  );
  await swapInStagedCopy(paths, log);
  return { kind: await completeMove(paths, log, host, settings, self) };
}

/** A promise's outcome without a rejection left unhandled while others are awaited. */
function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return Promise.allSettled([promise]).then(([result]) => result as PromiseSettledResult<T>);
}

/** A copy staged for a host that turned out not ready; a leftover is cleared by the next attempt anyway. */
async function discardStaging(paths: HostRootMovePaths): Promise<void> {
  const staging = stagingOf(paths);
  try {
    await rm(staging, { recursive: true, force: true });
  } catch (error) {
    throw makeIoError('remove', staging, error);
  }
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
