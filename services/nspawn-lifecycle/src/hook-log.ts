/** One phase's log: a line per event on stderr, which systemd sends to the journal. */
export interface HookLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** Where the log goes; stderr in production. */
export interface LogSink {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

// pino's numeric levels, so the journal shows the hook's lines as it shows the daemon's.
const levels = { info: 30, warn: 40 } as const;

/**
 * The hook's log without pino: it runs at every machine start and loads
 * nothing it does not need. A JSON line per event for the journal, a plain
 * line on a terminal.
 */
export function createHookLog(
  context: { phase: string; machine: string },
  sink: LogSink = process.stderr,
): HookLog {
  const line = (level: keyof typeof levels, message: string, fields = {}) => {
    if (sink.isTTY === true) {
      sink.write(`${level === 'warn' ? 'warning: ' : ''}${message}\n`);
      return;
    }
    sink.write(
      `${JSON.stringify({
        level: levels[level],
        time: Date.now(),
        role: 'nspawn-lifecycle',
        ...context,
        ...fields,
        msg: message,
      })}\n`,
    );
  };
  return {
    info: (message, fields) => {
      line('info', message, fields);
    },
    warn: (message, fields) => {
      line('warn', message, fields);
    },
  };
}
