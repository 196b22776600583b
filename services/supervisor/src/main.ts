import {
  convergeHostInstall,
  guardLegacySeed,
  refuseUnfinishedMove,
} from '@aks-flex-node/agentbinary';
import type { VersionInfo } from '@aks-flex-node/api';
import { readAgentConfig } from '@aks-flex-node/config';
import { hostRootState, recordDigest, resolveHostRoot } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';
import { isActivationLockHeld } from '@aks-flex-node/lock';
import { createLogger } from '@aks-flex-node/log';
import { createHost } from '@aks-flex-node/systemd';
import { buildApp } from './app.js';
import { createHostRootService } from './host-root-service.js';
import { createMutationQueue } from './mutation-queue.js';
import { createDaemonMoveHost } from './startup/daemon-move-host.js';
import { monotonicMs, recordAgentStart } from './upgrade/start-limit.js';
import { runStartSequence } from './startup/start-sequence.js';
import { createStartupGate } from './startup/startup-gate.js';
import { createStopRequest, runDaemon, waitForStopSignal } from './run-daemon.js';
import { createOperationRegistry } from './upgrade/operation-registry.js';
import { createReleaseArchives } from './upgrade/release-archives.js';
import {
  createSelfExitRestartExecutor,
  createSystemdRestartExecutor,
} from './upgrade/restart-executor.js';
import { createStagedBinaries } from './upgrade/staged-binaries.js';
import { combineUpgradeSources } from './upgrade/upgrade-sources.js';
import { createUpgradeService } from './upgrade/upgrade-service.js';

/** What starting the supervisor needs: the parsed command line and this build's version. */
export interface SupervisorOptions {
  configPath: string;
  version: VersionInfo;
}

/**
 * The supervisor's composition root: the one place its object graph is
 * built. Nothing here touches the host; {@link runDaemon} takes the guard
 * before the first effect. Resolves with the exit code.
 */
export async function runSupervisor(options: SupervisorOptions): Promise<number> {
  // First, so a SIGTERM during start-up still ends in a clean close.
  const stop = createStopRequest(waitForStopSignal());
  const config = await readAgentConfig(options.configPath);
  const log = createLogger({
    level: config.agent?.logLevel ?? 'info',
    bindings: { role: 'agent' },
  });
  const paths = hostPaths;
  const host = createHost({ log });
  // systemd sets INVOCATION_ID for the processes of a unit. Only then does the
  // daemon own the units and restart through systemd; started by hand (tests,
  // debugging) it only serves, and a restart stops it for its caller to rerun.
  const managedBySystemd = process.env.INVOCATION_ID !== undefined;
  const restart = managedBySystemd
    ? createSystemdRestartExecutor(log, undefined, { startsFile: paths.agentStarts })
    : createSelfExitRestartExecutor(log, stop.request);
  const queue = createMutationQueue({ lockPath: paths.activationLock, log });
  const operations = createOperationRegistry();
  const upgrades = createUpgradeService({
    paths,
    log,
    queue,
    registry: operations,
    restart,
    archives: combineUpgradeSources(
      createReleaseArchives(paths.downloadsDir),
      createStagedBinaries(),
    ),
    // Before anything is staged: an unfinished move's legacy files are a whole
    // installation an earlier release would run from; then the legacy seed.
    guard: async () => {
      await refuseUnfinishedMove(paths);
      await guardLegacySeed(paths, log);
    },
    host,
  });
  const hostRoot = createHostRootService(paths, log);
  const gate = createStartupGate();
  const moveHost = createDaemonMoveHost({
    paths,
    log,
    restart,
    ...(managedBySystemd ? { systemctl: host.systemctl } : {}),
    // NSPAWN STEP (not wired on this branch): shared/nspawn (branch
    // issue-9-nspawn) provides it; once merged this becomes
    //   refreshNspawnHooks: async (root) => {
    //     await rewriteNspawnHooks(root, paths, log, { executable: await host.runningExecutable() });
    //   },
    // Until then rewriteUnits logs that the nspawn hooks were not rewritten.
  });
  // Resolved after Migrate: the root this daemon's paths name.
  let startupRoot = paths.root;
  return runDaemon({
    paths,
    log,
    version: options.version,
    stopSignal: stop.requested,
    upgrades,
    prepareHost: async () => {
      // Each start under systemd is one its start limit counts; recorded so a
      // planned restart can be spaced where reset-failed is refused.
      if (managedBySystemd) await recordAgentStart(paths.agentStarts, monotonicMs());
      const executable = await host.runningExecutable();
      await convergeHostInstall({
        paths,
        log,
        executable,
        ...(managedBySystemd ? { systemctl: host.systemctl } : {}),
      });
      startupRoot = await resolveHostRoot(paths);
      // NSPAWN STEP (not wired on this branch): the helper is installed from the
      // running binary at every start (upstream #378), with issue-9-nspawn's
      // `installNspawnLifecycleHelper(paths, log, executable)`, here.
      // Every daemon that runs on a linked host records itself: the move
      // waits until current and last-good are both binaries that know the root.
      if ((await hostRootState(paths)) === 'linked') {
        await recordDigest(paths.digestRecord, executable);
      }
    },
    startSequence: (stopped) =>
      runStartSequence(
        {
          paths,
          log,
          gate,
          judge: () => upgrades.judgeAtStart(),
          queue,
          moveHost,
          startupRoot,
          sleep: (ms, signal) => host.sleep(ms, signal),
          restartDelayMs: () => restart.pendingDelayMs(),
        },
        stopped,
      ),
    buildApp: async (daemon) =>
      buildApp({
        log,
        version: options.version,
        hostRoot,
        upgrades,
        operations,
        runMutation: (purpose, work) => queue.run(purpose, work),
        startup: gate,
        isActivationInProgress: async () =>
          queue.isBusy() || (await isActivationLockHeld(paths.activationLock)),
        daemon: {
          ...daemon,
          startedAt: host.now(),
          executable: await host.runningExecutable(),
        },
        now: () => host.now(),
      }),
  });
}
