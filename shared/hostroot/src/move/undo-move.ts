import { rename, rm } from 'node:fs/promises';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { canonicalPath, makeIoError, replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import { stagingOf, type HostRootPaths } from '../host-root-paths.js';
import type { MoveHost } from './move-host.js';

/**
 * Puts a host whose copy cannot run back to being linked (spec hostroot §4.6),
 * then throws why. Every legacy file is still there: only a daemon running
 * from the copy removes them. The digest record stays, so the next start
 * tries again, verification included.
 *
 * Differs from the Go order on purpose: the units are pointed back at the
 * legacy root first, while the copy is still in place, so at no instant does
 * a unit name a root that is missing (between setting the copy aside and
 * linking again there is no root). The link is made even when that rewrite
 * fails.
 *
 * Always throws: NOT_EXECUTABLE when the host is linked again, HOST_ROOT_IO
 * naming both failures when it could not be.
 */
export async function undoMove(
  paths: HostRootPaths,
  log: Logger,
  host: MoveHost,
  cause: unknown,
): Promise<never> {
  log.warn(
    { err: cause, root: paths.root, legacy: paths.legacy },
    'the agent cannot run from the host root; keeping its files under the legacy root',
  );
  const failures: unknown[] = [];
  try {
    await host.rewriteUnits(await canonicalPath(paths.legacy));
    failpoint(failpoints.moveUndoUnitsPointedBack);
  } catch (error) {
    failures.push(error);
  }
  try {
    await relinkHostRoot(paths);
  } catch (error) {
    failures.push(error);
  }
  const reason = messageOf(cause);
  if (failures.length > 0) {
    const why = failures.map(messageOf).join('; ');
    throw new AgentError(
      'HOST_ROOT_IO',
      `the agent cannot run from ${paths.root}: ${reason}; and pointing the host back at ${paths.legacy} failed: ${why}`,
      {
        path: paths.root,
        cause: new AggregateError([cause, ...failures]),
        hint: 'fix the failure above (systemctl status aks-flex-node-agent), then restart the agent; it retries at its next start',
      },
    );
  }
  throw new AgentError(
    'NOT_EXECUTABLE',
    `the agent cannot run from ${paths.root}, so it stays linked to ${paths.legacy}: ${reason}`,
    {
      path: paths.root,
      cause,
      hint: `make the filesystem holding ${paths.root} allow running programs (not noexec, SELinux labels restorable); the next agent start moves it again`,
    },
  );
}

/**
 * Replaces the copy at the root with the link to the legacy root (spec
 * hostroot §4.6 relink). A link cannot replace a directory, so the copy is
 * set aside under the staging name first; a crash before the link leaves no
 * root, and the next start's Migrate links it the same way. Throws HOST_ROOT_IO.
 */
export async function relinkHostRoot(paths: HostRootPaths): Promise<void> {
  const staging = stagingOf(paths);
  await removeStaging(staging);
  failpoint(failpoints.moveUndoStagingCleared);
  try {
    await rename(paths.root, staging);
  } catch (error) {
    throw makeIoError('move', paths.root, error, { object: `to ${staging}` });
  }
  failpoint(failpoints.moveUndoRootSetAside);
  // Syncs the parent, so the link, not the copy, is what a crash leaves.
  await replaceSymlinkAtomic(paths.root, paths.legacy);
  failpoint(failpoints.moveUndoRelinked);
  await removeStaging(staging);
  failpoint(failpoints.moveUndoCopyRemoved);
}

async function removeStaging(staging: string): Promise<void> {
  try {
    await rm(staging, { recursive: true, force: true });
  } catch (error) {
    throw makeIoError('remove', staging, error);
  }
}
