import type { Logger } from '@aks-flex-node/log';

/**
 * The signals the daemon receives and goes on serving. By default each ends
 * a Node.js process: SIGHUP (which systemd counts as a clean exit, so
 * `Restart=on-failure` left the agent down) and SIGUSR2 (a kill, back only
 * after RestartSec). Log rotation and ops scripts send them to every daemon.
 * SIGUSR1 is not here: the executable blocks it (--disable-sigusr1,
 * scripts/build.mjs), so it neither stops the daemon nor opens the inspector.
 */
export const ignoredSignals = ['SIGHUP', 'SIGUSR2'] as const;

/** What {@link ignoreSignals} returns: where to log the signals, once a logger exists. */
export interface IgnoredSignals {
  /** Logs the signals received so far, and from now on each as it comes. */
  logTo: (log: Logger) => void;
}

/**
 * Keeps {@link ignoredSignals} from stopping the daemon: the daemon reloads
 * nothing, so each is logged at info and otherwise ignored. Called first,
 * before the config names the log level, so a signal in the daemon's start
 * is held and logged once {@link IgnoredSignals.logTo} gives the logger.
 */
export function ignoreSignals(): IgnoredSignals {
  const early: NodeJS.Signals[] = [];
  let logger: Logger | undefined;
  const report = (signal: NodeJS.Signals, log: Logger) => {
    log.info(
      { signal, hint: 'run `systemctl restart aks-flex-node-agent` to apply a changed config' },
      'ignored a signal: the daemon reloads nothing and goes on serving',
    );
  };
  // `on`, as for SIGTERM (run-daemon.ts): while a listener of ours is
  // registered, signal-exit (loaded with execa) leaves the signal alone
  // rather than re-raising it to kill the daemon.
  for (const name of ignoredSignals) {
    process.on(name, (signal: NodeJS.Signals) => {
      if (logger === undefined) early.push(signal);
      else report(signal, logger);
    });
  }
  return {
    logTo: (log) => {
      logger = log;
      for (const signal of early.splice(0)) report(signal, log);
    },
  };
}
