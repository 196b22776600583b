import type { VersionInfo } from '@aks-flex-node/api';
import type { HostPaths } from '@aks-flex-node/layout';
import { holdSingleInstance } from '@aks-flex-node/lock';
import type { Logger } from '@aks-flex-node/log';
import type { FastifyInstance } from 'fastify';
import type { SupervisorDeps } from './deps.js';
import { closeWithin, shutdownGraceMs } from './socket/close-within.js';
import { listenOn, type ListenTarget } from './socket/listen.js';
import { takeSystemdSocket } from './socket/systemd-socket.js';
import type { ResetService } from './reset/reset-service.js';
import type { UpgradeService } from './upgrade/upgrade-service.js';

/** How long a started daemon must stay up before it judges a pending upgrade a success. */
export const startupStabilityMs = 3_000;

/** What {@link runDaemon} needs from the composition root. */
export interface DaemonOptions {
  paths: Pick<HostPaths, 'socket' | 'daemonLock'>;
  log: Logger;
  version: VersionInfo;
  upgrades: Pick<UpgradeService, 'judgeAtStart' | 'drain'>;
  /** Awaited at shutdown like the upgrades, so a reset's record is written before exit. */
  reset: Pick<ResetService, 'drain'>;
  /** Runs before the socket is served: migrate, seed, service assets, the sweep of leftovers. Fatal on error. */
  prepareHost: () => Promise<void>;
  /** Builds the API once the host is prepared, told how this process serves. */
  buildApp: (
    daemon: Pick<SupervisorDeps['daemon'], 'pid' | 'socket' | 'socketPath'>,
  ) => Promise<FastifyInstance>;
  /** Resolves when the daemon should stop (SIGTERM, SIGINT, or a restart it asked for). */
  stopSignal: Promise<string>;
  stabilityMs?: number;
}

/**
 * The daemon's life: guard against a second daemon, prepare the host, serve
 * the API, judge a pending upgrade once it has been up a stability interval,
 * and close cleanly when told to stop. Resolves with the exit code.
 */
export async function runDaemon(options: DaemonOptions): Promise<number> {
  const { log, paths, upgrades, reset } = options;
  const passedFd = takeSystemdSocket();
  // The guard comes first: a second daemon must refuse before it touches the
  // host or the socket file the first one serves.
  const guard = await holdSingleInstance(paths.daemonLock, paths.socket);
  try {
    await options.prepareHost();
    const target: ListenTarget =
      passedFd === undefined
        ? { kind: 'self-bound', socketPath: paths.socket }
        : { kind: 'systemd', fd: passedFd };
    const app = await options.buildApp({
      pid: process.pid,
      socket: target.kind,
      socketPath: paths.socket,
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
    const signal = await options.stopSignal;
    log.info({ signal }, 'daemon shutting down');
    judging.cancel();
    // close() waits for requests in flight, for a bounded time. A passed socket stays
    // open in systemd, so clients that connect meanwhile wait for the next daemon.
    await closeWithin(app, shutdownGraceMs, log);
    await Promise.all([judging.done, upgrades.drain(), reset.drain()]);
    return 0;
  } finally {
    await guard.release();
  }
}

/**
 * A stop the daemon can ask for itself (a restart when no systemd restarts
 * it), raced with the external one: whichever comes first stops the daemon.
 */
export function createStopRequest(external: Promise<string>): {
  requested: Promise<string>;
  request: (reason: string) => void;
} {
  let request: (reason: string) => void = () => undefined;
  const internal = new Promise<string>((resolve) => (request = resolve));
  return { requested: Promise.race([external, internal]), request };
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
