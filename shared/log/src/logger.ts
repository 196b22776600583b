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
}

/**
 * Builds the process's root logger: JSON lines, errors under `err`, and URL
 * query strings and secrets redacted, because archive URLs may carry tokens.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
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
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
  return logger;
}

/** A logger that drops everything, for tests and one-shot commands that print. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
