import type { ActivationResult } from '@aks-flex-node/api';
import {
  guardLegacySeed,
  migrateHostRoot,
  refuseUnfinishedMove,
  resolveHostRoot,
} from '@aks-flex-node/hostroot';
import { hostRootMarkers, type HostPaths } from '@aks-flex-node/layout';
import {
  holdSingleInstance,
  withActivationLock,
  type SingleInstanceGuard,
} from '@aks-flex-node/lock';
import { AgentError, isAgentError, type Logger } from '@aks-flex-node/log';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import { inspectCandidate } from '../upgrade/stage-and-switch.js';
import { activateInLayout } from './activate-in-layout.js';
import { createFileInspector } from './activation-inspector.js';
import { createFlexActivationService } from './flex-activation-service.js';
import type { ServiceHost } from './service-host.js';

/** What {@link activateCandidate} needs. */
export interface ActivateCandidateOptions {
  paths: HostPaths;
  /** The candidate as the operator named it. */
  candidatePath: string;
  /** The private snapshot of its bytes: what is installed. */
  snapshotPath: string;
  host: ServiceHost;
  log: Logger;
  signal?: AbortSignal;
}

/**
 * A direct activation on a host where no daemon answers (spec agentbinary
 * §3.6.4): under the activation lock, and while no daemon can start, it
 * migrates the host root first (any path resolved before would name the
 * empty root on a host an earlier release installed), runs the legacy-seed
 * guard, then activates the snapshot in the layout under the resolved root.
 *
 * Throws ACTIVATION_IN_PROGRESS or DAEMON_RUNNING (busy, at once),
 * HOST_ROOT_REFUSED, UPGRADE_REFUSED, and UPGRADE_FAILED (switched, then
 * rolled back or not, as the message says).
 */
export async function activateCandidate(
  options: ActivateCandidateOptions,
): Promise<ActivationResult> {
  const { paths, log } = options;
  return withActivationLock(
    {
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'a direct activation',
    },
    async () => {
      const releaseGuard = once(await excludeDaemon(paths.daemonLock, paths.socket));
      try {
        await migrateHostRoot(paths, log, hostRootMarkers());
        await refuseUnfinishedMove(paths);
        await guardLegacySeed(paths, log);
        const binaryPaths = agentBinaryPathsUnder(await resolveHostRoot(paths));
        const service = createFlexActivationService({
          paths,
          binaryPaths,
          host: options.host,
          log,
        });
        return await activateInLayout({
          layout: binaryPaths,
          candidatePath: options.candidatePath,
          snapshotPath: options.snapshotPath,
          files: createFileInspector(),
          service: {
            ...service,
            // The restarted daemon takes the guard itself, so it goes before systemd acts.
            reload: async (plan) => {
              await releaseGuard();
              await service.reload(plan);
            },
          },
          verify: async (binary) => {
            await inspectCandidate(binary, paths);
          },
          log,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
      } finally {
        await releaseGuard();
      }
    },
  );
}

/**
 * Holds the daemon's single-instance guard while the files change. The CLI
 * activates locally only when no daemon answered; one that is starting (or
 * hung) but holds the guard would write the same layout, so it is refused.
 */
async function excludeDaemon(lockPath: string, socketPath: string): Promise<SingleInstanceGuard> {
  try {
    return await holdSingleInstance(lockPath, socketPath);
  } catch (error) {
    if (!isAgentError(error, 'DAEMON_RUNNING')) throw error;
    throw new AgentError(
      'DAEMON_RUNNING',
      `a daemon is running but did not answer on ${socketPath}; it would race this activation (${error.message})`,
      {
        path: socketPath,
        cause: error,
        hint: 'retry once `aks-flex-node status` answers, and the daemon takes the activation over',
      },
    );
  }
}

function once(guard: SingleInstanceGuard): () => Promise<void> {
  let released: Promise<void> | undefined;
  return () => (released ??= guard.release());
}
