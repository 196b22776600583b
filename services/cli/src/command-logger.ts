import { createLogger, type Logger } from '@aks-flex-node/log';

/**
 * The logger of a one-shot command (start, recovery, direct activation).
 * Structured JSON lines go to stderr when asked for with `--json`, or when
 * systemd runs the command and stderr is the journal (JOURNAL_STREAM is set
 * and stderr is no terminal): that is where operators read them. Otherwise,
 * on a terminal or in a pipe, each line becomes a short sentence, so an
 * operator running `start` by hand reads what happened, not JSON.
 */
export function createCommandLogger(role: string, options: { json: boolean }): Logger {
  const structured = options.json || writesToJournal();
  return createLogger({
    level: 'info',
    bindings: { role },
    destination: structured ? process.stderr : humanSentences(process.stderr),
  });
}

function writesToJournal(): boolean {
  return process.env.JOURNAL_STREAM !== undefined && !process.stderr.isTTY;
}

/**
 * A pino destination that prints each line's message, with the path it is
 * about (`wrote a service asset: /etc/systemd/system/…`, where the message
 * alone would repeat without saying which), and for a warning or error, the
 * error's message too.
 */
export function humanSentences(out: { write(text: string): unknown }): {
  write(line: string): void;
} {
  return {
    write(line: string) {
      let entry: { level?: number; msg?: string; path?: unknown; err?: { message?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        out.write(line);
        return;
      }
      const level = entry.level ?? 30;
      const prefix = level >= 50 ? 'error: ' : level >= 40 ? 'warning: ' : '';
      const about = typeof entry.path === 'string' ? `: ${entry.path}` : '';
      const cause = level >= 40 && entry.err?.message !== undefined ? `: ${entry.err.message}` : '';
      out.write(`${prefix}${entry.msg ?? ''}${about}${cause}\n`);
    },
  };
}
