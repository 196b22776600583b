import { realpath } from 'node:fs/promises';
import type { VersionInfo } from '@aks-flex-node/api';
import { isActivationLockHeld } from '@aks-flex-node/lock';
import type { HostPaths } from '@aks-flex-node/layout';
import type { Logger } from '@aks-flex-node/log';
import { buildApp } from './app.js';
import type { HostRootService } from './deps.js';
import { createMutationQueue } from './mutation-queue.js';
import { listenOn, type ListenTarget } from './socket/listen.js';
import { holdSingleInstance } from './socket/single-instance.js';
import { takeSystemdSocket } from './socket/systemd-socket.js';

/** What {@link runDaemon} needs from its caller. */
export interface DaemonOptions {
  paths: HostPaths;
  log: Logger;
  version: VersionInfo;
  hostRoot: HostRootService;
  /** Runs before the socket is served: migrate, seed, service assets. Fatal on error. */
  prepareHost: () => Promise<void>;
  /** Resolves when the daemon should stop (SIGTERM, SIGINT). */
  stopSignal: Promise<string>;
}

/**
 * The daemon's life: guard against a second daemon, prepare the host, serve
 * the API until told to stop, then close cleanly. Resolves with the exit code.
 */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const { log, paths } = options;
  const passedFd = takeSystemdSocket();
  // The guard comes first: a second daemon must refuse before it touches the
  // host or the socket file the first one serves.
  const guard = await holdSingleInstance(paths.socket);
  try {
    await options.prepareHost();
    const target: ListenTarget =
      passedFd === undefined
        ? { kind: 'self-bound', socketPath: paths.socket }
        : { kind: 'systemd', fd: passedFd };
    const queue = createMutationQueue({ lockPath: paths.activationLock, log });
    const app = await buildApp({
      log,
      version: options.version,
      hostRoot: options.hostRoot,
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
    const signal = await options.stopSignal;
    log.info({ signal }, 'daemon shutting down');
    // close() waits for requests in flight. A passed socket stays open in systemd,
    // so clients that connect meanwhile wait for the next daemon instead of failing.
    await app.close();
    return 0;
  } finally {
    await guard.release();
  }
}

/** A promise that resolves with the name of the first stop signal received. */
export function waitForStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
