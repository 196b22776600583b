import v8 from 'node:v8';
import vm from 'node:vm';
import type { VersionInfo } from '@aks-flex-node/api';
import type { HostPaths } from '@aks-flex-node/layout';
import { holdSingleInstance } from '@aks-flex-node/lock';
import type { Logger } from '@aks-flex-node/log';
import type { FastifyInstance } from 'fastify';
import { collectAfterLoad } from './collect-after-load.js';
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
  upgrades: Pick<UpgradeService, 'drain'>;
  /**
   * The start after the stability interval: judge, move, open or hold the
   * gate. Resolves with a reason to exit non-zero (held and not replaced in
   * time), or undefined. `stopped` aborts its waits when the daemon stops.
   */
  startSequence: (stopped: AbortSignal) => Promise<string | undefined>;
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
  /**
   * One full garbage collection, run once the start sequence has settled;
   * V8's most thorough one by default.
   */
  collectGarbage?: (() => void) | undefined;
  /**
   * Stops V8 growing the young generation from here on; run once, after the
   * start's collection. V8's run-time flag by default.
   */
  holdYoungGeneration?: (() => void) | undefined;
}

/**
 * The daemon's life: guard against a second daemon, prepare the host, serve
 * the API (reads only while the startup gate is shut), run the start sequence
 * once it has been up a stability interval, and close cleanly when told to
 * stop. Resolves with the exit code: 0 when stopped, 1 when it held its gate
 * shut and was not replaced in time (so Restart= starts it again).
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
    const collectGarbage = options.collectGarbage ?? collectAllGarbage;
    const afterLoad = collectAfterLoad({ collect: collectGarbage });
    // Every answered request counts, whatever its route: a load's garbage is
    // collected once the load ends (collect-after-load.ts).
    app.addHook('onResponse', (_request, _reply, done) => {
      afterLoad.noteRequest();
      done();
    });
    await app.ready();
    await listenOn(app.server, target);
    log.info(
      { socket: paths.socket, via: target.kind, version: options.version.version },
      'daemon serving',
    );
    const starting = startAfterStability(
      options.startSequence,
      options.stabilityMs ?? startupStabilityMs,
      log,
      () => {
        collectGarbage();
        (options.holdYoungGeneration ?? holdYoungGenerationSize)();
      },
    );
    const ended = await Promise.race([
      options.stopSignal.then((signal) => ({ signal, expired: undefined })),
      starting.expired.then((expired) => ({ signal: 'hold expired', expired })),
    ]);
    if (ended.expired === undefined) log.info({ signal: ended.signal }, 'daemon shutting down');
    else log.error({ reason: ended.expired }, 'daemon exiting: it was not replaced');
    starting.cancel();
    afterLoad.stop();
    // close() waits for requests in flight, for a bounded time. A passed socket stays
    // open in systemd, so clients that connect meanwhile wait for the next daemon.
    await closeWithin(app, shutdownGraceMs, log);
    await Promise.all([starting.done, upgrades.drain(), reset.drain()]);
    return ended.expired === undefined ? 0 : 1;
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
 * Runs the start sequence once this process has stayed up the stability
 * interval: a binary that dies within it never reports itself a success.
 * `expired` resolves only when the sequence asks the daemon to exit.
 */
function startAfterStability(
  sequence: DaemonOptions['startSequence'],
  delayMs: number,
  log: Logger,
  collectGarbage: (() => void) | undefined,
) {
  const stopped = new AbortController();
  let markDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (markDone = resolve));
  let expire: (reason: string) => void = () => undefined;
  const expired = new Promise<string>((resolve) => (expire = resolve));
  let fired = false;
  const timer = setTimeout(() => {
    fired = true;
    sequence(stopped.signal)
      .then((reason) => {
        if (reason !== undefined) expire(reason);
      })
      .catch((error: unknown) => {
        // Not fatal: the gate stays shut, and the next start runs the sequence again.
        log.error({ err: error }, 'the start sequence failed; the daemon takes no changes');
      })
      .finally(() => {
        markDone();
        // Starting leaves garbage an idle daemon would keep for good: V8's
        // memory reducer is off (its timer would wake the daemon every 8 s),
        // so nothing else collects the old generation or shrinks the young
        // one the start grew to 16 MB. One full collection once the start is
        // over (docs/performance.md, "Where the daemon's memory goes").
        collectGarbage?.();
      });
  }, delayMs);
  return {
    done,
    expired,
    /** Stops a sequence that has not begun, and aborts the waits of one under way. */
    cancel: () => {
      clearTimeout(timer);
      stopped.abort();
      if (!fired) markDone();
    },
  };
}

/**
 * V8's most thorough collection (`gc()`'s "last-resort": several rounds,
 * compacting, returning freed pages). A plain `gc()` left about 7 MB more
 * anonymous memory behind. It pauses the daemon once, while it is idle.
 * `gc` is exposed here, at run time, not by `--expose-gc` in the
 * executable's flags: a flag there changes V8's flag hash for every role,
 * and the hot roles' code caches made without it cost them 7-12 ms more
 * CPU at each start (hyperfine, `version` and `host-root`). The daemon's
 * bundle is compiled by now, so the changed hash costs it nothing.
 */
function collectAllGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as NodeJS.GCFunction;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * Keeps V8's young generation at the size the start's collection left it
 * (1 MB a semi-space) instead of doubling it whenever a scavenge finds
 * survivors: under 64 clients it grew to 16 MB a semi-space and never shrank
 * while the load lasted (docs/performance.md, "Under load"). V8 reads this
 * flag at each growth, so it takes effect at run time; the cap
 * (`--max-semi-space-size`) is read only when the isolate is made, and in the
 * executable's flags it would change V8's flag hash for every role. The
 * daemon's bundle is compiled by now, so the changed hash costs it nothing.
 */
function holdYoungGenerationSize(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
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
