import { realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  agentBinaryPathsUnder,
  sweepUpgradeLeftovers,
  type LeftoverPlaces,
} from '@aks-flex-node/agentbinary';
import type { VersionInfo } from '@aks-flex-node/api';
import { isActivationLockHeld } from '@aks-flex-node/lock';
import type { HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { buildApp } from './app.js';
import type { HostRootService } from './deps.js';
import { createMutationQueue } from './mutation-queue.js';
import { closeWithin, shutdownGraceMs } from './socket/close-within.js';
import { listenOn, type ListenTarget } from './socket/listen.js';
import { holdSingleInstance } from './socket/single-instance.js';
import { takeSystemdSocket } from './socket/systemd-socket.js';
import type { ArchiveHandler } from './upgrade/archive-handler.js';
import { guardLegacySeed } from './upgrade/legacy-seed-guard.js';
import { createOperationRegistry } from './upgrade/operation-registry.js';
import {
  createSelfExitRestartExecutor,
  createSystemdRestartExecutor,
  type RestartExecutor,
} from './upgrade/restart-executor.js';
import { createUpgradeService } from './upgrade/upgrade-service.js';

/** How long a started daemon must stay up before it judges a pending upgrade a success. */
export const startupStabilityMs = 3_000;

/** What {@link runDaemon} needs from its caller. */
export interface DaemonOptions {
  paths: HostPaths;
  log: Logger;
  version: VersionInfo;
  hostRoot: HostRootService;
  archives: ArchiveHandler;
  /** Whether systemd runs this daemon: then restarts go through systemd and a guard watches upgrades. */
  managedBySystemd: boolean;
  /** Runs before the socket is served: migrate, seed, service assets. Fatal on error. */
  prepareHost: () => Promise<void>;
  /** Resolves when the daemon should stop (SIGTERM, SIGINT). */
  stopSignal: Promise<string>;
  stabilityMs?: number;
}

/**
 * The daemon's life: guard against a second daemon, prepare the host, serve
 * the API, judge a pending upgrade once it has been up a stability interval,
 * and close cleanly when told to stop. Resolves with the exit code.
 */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const { log, paths } = options;
  const passedFd = takeSystemdSocket();
  // The guard comes first: a second daemon must refuse before it touches the
  // host or the socket file the first one serves.
  const guard = await holdSingleInstance(paths.daemonLock, paths.socket);
  try {
    await options.prepareHost();
    await sweepUpgradeLeftovers(leftoverPlaces(paths), log);
    let requestStop: (reason: string) => void = () => undefined;
    const internalStop = new Promise<string>((resolve) => (requestStop = resolve));
    const restart: RestartExecutor = options.managedBySystemd
      ? createSystemdRestartExecutor(log)
      : createSelfExitRestartExecutor(log, requestStop);
    const target: ListenTarget =
      passedFd === undefined
        ? { kind: 'self-bound', socketPath: paths.socket }
        : { kind: 'systemd', fd: passedFd };
    const queue = createMutationQueue({ lockPath: paths.activationLock, log });
    const operations = createOperationRegistry();
    const upgrades = createUpgradeService({
      paths,
      log,
      queue,
      registry: operations,
      restart,
      archives: options.archives,
      guard: () => guardLegacySeed(paths, log),
      now: () => new Date(),
    });
    const app = await buildApp({
      log,
      version: options.version,
      hostRoot: options.hostRoot,
      upgrades,
      operations,
      runMutation: (purpose, work) => queue.run(purpose, work),
      isActivationInProgress: async () =>
        queue.isBusy() || (await isActivationLockHeld(paths.activationLock)),
      daemon: {
        pid: process.pid,
        startedAt: Date.now(),
        executable: await realpath(process.execPath),
        socket: target.kind,
        socketPath: paths.socket,
      },
      now: () => Date.now(),
    });
    await app.ready();
    await listenOn(app.server, target);
    log.info(
      { socket: paths.socket, via: target.kind, version: options.version.version },
      'daemon serving',
    );
    const judging = judgeAfterStability(
      () => upgrades.judgeAtStart(),
      options.stabilityMs ?? startupStabilityMs,
      log,
    );
    const signal = await Promise.race([options.stopSignal, internalStop]);
    log.info({ signal }, 'daemon shutting down');
    judging.cancel();
    // close() waits for requests in flight, for a bounded time. A passed socket stays
    // open in systemd, so clients that connect meanwhile wait for the next daemon.
    await closeWithin(app, shutdownGraceMs, log);
    await Promise.all([judging.done, upgrades.drain()]);
    return 0;
  } finally {
    await guard.release();
  }
}

/**
 * Judges a pending upgrade once this process has stayed up the stability
 * interval: a binary that dies within it never reports itself a success.
 */
function judgeAfterStability(judge: () => Promise<unknown>, delayMs: number, log: Logger) {
  let fired = false;
  let markDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  const timer = setTimeout(() => {
    fired = true;
    judge()
      .then((outcome) => {
        log.info({ outcome }, 'judged the pending AgentUpgrade');
      })
      .catch((error: unknown) => {
        // Not fatal: the signal stays, and the next start (or the guard) finishes it.
        log.error(
          { err: error },
          'could not judge the pending AgentUpgrade; the next start retries',
        );
      })
      .finally(markDone);
  }, delayMs);
  return {
    done,
    /** Stops a judgement that has not begun; one under way is awaited through `done`. */
    cancel: () => {
      clearTimeout(timer);
      if (!fired) markDone();
    },
  };
}

/** A promise that resolves with the name of the first stop signal received. */
export function waitForStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      resolve(signal);
    };
    // `on`, not `once`: a listener must stay registered while the daemon shuts
    // down, or signal-exit (used by execa) takes the signal as unhandled, kills
    // the commands still running (the restart just queued) and re-raises it.
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

/**
 * Where the start-time sweep looks: the slots under the host root (through
 * its link on a linked host; prepareHost has made it exist), and the
 * downloads directory `agent` gives the release archives.
 */
function leftoverPlaces(paths: HostPaths): LeftoverPlaces {
  return {
    slotDir: agentBinaryPathsUnder(paths.root).slotDir,
    downloadsDir: path.join(paths.stateDir, 'downloads'),
    stateDir: paths.stateDir,
  };
}
