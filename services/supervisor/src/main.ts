import path from 'node:path';
import { describeUnknownConfigKey } from '@aks-flex-node/config';
import {
  agentBinaryPathsUnder,
  createCandidateFetcher,
  writeUnitsForBinaries,
  createHost,
} from '@aks-flex-node/agentbinary';
import type { VersionInfo } from '@aks-flex-node/api';
import { resolveHostRoot } from '@aks-flex-node/hostroot';
import { isActivationLockHeld } from '@aks-flex-node/lock';
import {
  createIpNetworkEffects,
  createSystemdResetEffects,
  isSystemdBooted,
} from '@aks-flex-node/reset';
import { configLastGoodFor, hostPaths, unitNames } from '@aks-flex-node/layout';
import { createLogger } from '@aks-flex-node/log';
import { fileDigest } from '@aks-flex-node/fs';
import { rewriteNspawnHooks } from '@aks-flex-node/nspawn';
import { buildApp } from './app.js';
import { createHostRootService } from './host-root-service.js';
import { ignoreSignals } from './ignored-signals.js';
import { createHostView } from './host-view.js';
import { hostViewDirs, watchDirectory } from './host-view-watch.js';
import { createMutationQueue } from './mutation-queue.js';
import { createResetService } from './reset/reset-service.js';
import { createSelfDaemonStopper, createSystemdDaemonStopper } from './reset/stop-daemon.js';
import { createNspawnHooksService } from './nspawn-hooks-service.js';
import { createDaemonMoveHost } from './startup/daemon-move-host.js';
import { keepConfigLastGood, readConfigAtStart } from './startup/config-last-good.js';
import { prepareHost, saveFileDigestsForNextStart } from './startup/prepare-host.js';
import { runStartSequence } from './startup/start-sequence.js';
import { createStartupGate } from './startup/startup-gate.js';
import { createStopRequest, runDaemon, waitForStopSignal } from './run-daemon.js';
import { createOperationRegistry } from './upgrade/operation-registry.js';
import {
  createSelfExitRestartExecutor,
  createSystemdRestartExecutor,
} from './upgrade/restart-executor.js';
import { createMachineCopyKeeper } from './upgrade/machine-copy-keeper.js';
import { refuseShortSpace, refuseUnsafeHost } from './upgrade/upgrade-requests.js';
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
  // First, so a SIGTERM during start-up still ends in a clean close, and a
  // SIGHUP or SIGUSR2 then is ignored rather than ending the daemon.
  const stop = createStopRequest(waitForStopSignal());
  const ignored = ignoreSignals();
  // A config that is not JSON (a torn write) runs this start with its
  // last-good copy, put in its place once the guard is held (prepareHost).
  const configFiles = {
    configPath: options.configPath,
    lastGoodPath: configLastGoodFor(options.configPath),
  };
  const startConfig = await readConfigAtStart(configFiles);
  const { config } = startConfig;
  const log = createLogger({
    level: config.agent?.logLevel ?? 'info',
    bindings: { role: 'agent' },
    // As the Go releases: the journal, and <logDir>/aks-flex-node.log when the config names one.
    ...(config.agent?.logDir === undefined
      ? {}
      : { alsoToFile: path.join(config.agent.logDir, 'aks-flex-node.log') }),
  });
  ignored.logTo(log);
  for (const unknown of startConfig.unknownKeys ?? []) {
    log.warn(
      { path: configFiles.configPath, key: unknown.key, closest: unknown.closest },
      describeUnknownConfigKey(configFiles.configPath, unknown),
    );
  }
  const paths = hostPaths;
  const host = createHost({ log });
  // systemd sets INVOCATION_ID for the processes of a unit. Only then does the
  // daemon own the units and restart through systemd; started by hand (tests,
  // debugging) it only serves, and a restart stops it for its caller to rerun.
  const managedBySystemd = process.env.INVOCATION_ID !== undefined;
  const restart = managedBySystemd
    ? createSystemdRestartExecutor(log, undefined, { startsFile: paths.agentStarts }, async () =>
        writeUnitsForBinaries(
          paths,
          agentBinaryPathsUnder(await resolveHostRoot(paths)),
          host.systemctl,
          log,
        ),
      )
    : createSelfExitRestartExecutor(log, stop.request);
  const queue = createMutationQueue({
    lockPath: paths.activationLock,
    goLockPath: paths.goUpgradeLock,
    log,
  });
  const operations = createOperationRegistry();
  const fileDigestCache = paths.fileDigestCache;
  const machineCopy = createMachineCopyKeeper({
    paths,
    log: log.child({ op: 'keep-machine-copy' }),
    queue,
    // By the digests of this boot's earlier starts: a restart reads neither 130 MB file.
    isCopyOf: async (copy, source) => {
      const same = (await fileDigest(copy)) === (await fileDigest(source));
      await saveFileDigestsForNextStart(fileDigestCache, log);
      return same;
    },
    sleep: (ms, signal) => host.sleep(ms, signal),
    now: () => host.wallClock(),
  });
  const upgrades = createUpgradeService({
    paths,
    log,
    queue,
    registry: operations,
    restart,
    fetchCandidate: createCandidateFetcher(paths.downloadsDir),
    guard: () => refuseUnsafeHost(paths, log),
    checkSpace: async (source, layout) => {
      await refuseShortSpace(source, layout, {
        runningExecutable: await host.runningExecutable(),
        downloadsDir: paths.downloadsDir,
      });
    },
    host,
    machineCopy,
  });
  const reset = createResetService({
    paths,
    log,
    queue,
    registry: operations,
    effects: (await isSystemdBooted(paths.prefix)) ? createSystemdResetEffects(log) : undefined,
    network: createIpNetworkEffects(log),
    // Under systemd this daemon is the agent unit, started through its socket.
    runningUnits: managedBySystemd ? [unitNames.agent, unitNames.agentSocket] : [],
    stopDaemon: managedBySystemd
      ? createSystemdDaemonStopper(log)
      : createSelfDaemonStopper(stop.request),
    now: () => host.wallClock(),
  });
  const hostRoot = createHostRootService(paths, log);
  // Status reads the host through this: it looks again after this daemon's
  // own changes and on file events for everyone else's.
  const hostView = createHostView({
    describeHostRoot: () => hostRoot.describe(),
    isLockHeld: () => isActivationLockHeld(paths.activationLock),
    queue,
    watch: { dirs: hostViewDirs(paths), watchDirectory },
    log,
  });
  const nspawnHooks = createNspawnHooksService({
    paths,
    log,
    executable: () => host.runningExecutable(),
    mutationRunning: async () =>
      queue.isBusy() || (await isActivationLockHeld(paths.activationLock)),
    ...(managedBySystemd ? { systemctl: host.systemctl } : {}),
  });
  const gate = createStartupGate();
  const moveHost = createDaemonMoveHost({
    paths,
    log,
    restart,
    ...(managedBySystemd ? { systemctl: host.systemctl } : {}),
    // The machines' hooks name the helper under the root the units now name,
    // installed from this binary first, so no hook names a stale helper.
    refreshNspawnHooks: async (root) => {
      await rewriteNspawnHooks(root, paths, log, { executable: await host.runningExecutable() });
    },
  });
  // Resolved after Migrate: the root this daemon's paths name.
  let startupRoot = paths.root;
  // What this start could not refresh (helper, LocalDNS unit): a pending
  // upgrade's judgement fails on it, and status shows it.
  const startupFailures: string[] = [];
  const noteStartupFailure = (failure: string | undefined) => {
    if (failure === undefined) return;
    startupFailures.push(failure);
    gate.noteProblem(failure);
  };
  // The view's watches end with the daemon (they never hold its exit up either).
  return runDaemon({
    paths,
    log,
    version: options.version,
    stopSignal: stop.requested,
    upgrades,
    reset,
    prepareHost: async () => {
      startupRoot = await prepareHost({
        paths,
        log,
        host,
        managedBySystemd,
        configFiles,
        startConfig,
        fileDigestCache,
        noteProblem: (problem) => {
          gate.noteProblem(problem);
        },
        noteStartupFailure,
      });
    },
    startSequence: (stopped) =>
      runStartSequence(
        {
          paths,
          log,
          gate,
          judge: (stopped, onNote) =>
            upgrades.judgeAtStart(stopped, {
              startupFailure: startupFailures.length === 0 ? undefined : startupFailures.join('; '),
              onNote,
            }),
          queue,
          moveHost,
          startupRoot,
          sleep: (ms, signal) => host.sleep(ms, signal),
          restartDelayMs: () => restart.pendingDelayMs(),
          keepMachineCopy: () => {
            upgrades.keepMachineCopy();
          },
        },
        stopped,
      ),
    buildApp: async (daemon) => {
      // The config this daemon got to serving with is the one a torn write
      // later converges back to.
      await keepConfigLastGood(configFiles, startConfig.text, log);
      return buildApp({
        log,
        version: options.version,
        hostRoot,
        nspawnHooks,
        upgrades,
        operations,
        reset,
        runMutation: (purpose, work) => queue.run(purpose, work),
        startup: gate,
        hostView,
        daemon: {
          ...daemon,
          startedAt: host.now(),
          executable: await host.runningExecutable(),
        },
        now: () => host.now(),
      });
    },
  }).finally(() => {
    hostView.close();
  });
}
