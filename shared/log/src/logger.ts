import { constants, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** Minimum level; defaults to `info`. */
  level?: string;
  /** Where lines go; defaults to stdout, which journald collects. */
  destination?: DestinationStream;
  /** Fields bound to every line (for example `{ role: 'agent' }`). */
  bindings?: Record<string, unknown>;
  /**
   * A file that gets every line too, appended to (the config's
   * `agent.logDir`, as the Go releases write `<logDir>/aks-flex-node.log`
   * beside the journal). One that cannot be opened leaves the lines to the
   * destination alone, with a warning there naming the file and why.
   */
  alsoToFile?: string;
}

/**
 * Builds the process's root logger: JSON lines, errors under `err`, and URL
 * query strings and secrets redacted, because archive URLs may carry tokens.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const { stream, fileFailure } = destinationFor(options);
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid, ...options.bindings },
      redact: {
        paths: ['token', '*.token', 'authorization', '*.authorization'],
        censor: '[redacted]',
      },
      serializers: { err: pino.stdSerializers.err },
    },
    stream,
  );
  if (fileFailure !== undefined) {
    logger.warn(
      { path: options.alsoToFile, err: fileFailure },
      `cannot write the log file ${options.alsoToFile ?? ''} (agent.logDir); logging to the journal only`,
    );
  }
  return logger;
}

/** The destination, teed into `alsoToFile` when that opens; otherwise why not. */
function destinationFor(options: LoggerOptions): {
  stream: DestinationStream;
  fileFailure?: unknown;
} {
  const main = options.destination ?? pino.destination({ dest: 1, sync: true });
  if (options.alsoToFile === undefined) return { stream: main };
  let fd: number;
  try {
    mkdirSync(path.dirname(options.alsoToFile), { recursive: true, mode: 0o755 });
    // O_NOFOLLOW: root appends here, and a log file replaced by a symlink
    // must not turn that into an append to wherever the link points.
    fd = openSync(
      options.alsoToFile,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o644,
    );
  } catch (error) {
    return { stream: main, fileFailure: error };
  }
  // Every line to both, at the logger's level (multistream's default is info).
  const level = options.level ?? 'info';
  const stream = pino.multistream([
    { level, stream: main },
    { level, stream: pino.destination({ dest: fd, sync: true }) },
  ]);
  return { stream };
}

/** A logger that drops everything, for tests and one-shot commands that print. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}

/**
 * A logger for tests that calls `then`, once, when a line says `words`: a
 * test waits for what the code announces (a wait begun, a retry) instead of
 * sleeping for a while and hoping it has happened.
 */
export function createLoggerCalling(words: string, then: () => void): Logger {
  let called = false;
  return createLogger({
    level: 'debug',
    destination: {
      write: (line: string) => {
        if (called || !line.includes(words)) return;
        called = true;
        then();
      },
    },
  });
}
