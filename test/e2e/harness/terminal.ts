/* eslint-disable no-control-regex -- this module reads a terminal's control sequences (ESC, CR) */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Host } from './host.js';
import type { CommandResult } from './run-process.js';
import { formatCommandResult } from './run-process.js';

// An operator at a terminal on the host. util-linux `script` runs inside the
// host and gives the command a pseudo-terminal of the host's own devpts: the
// command is the session leader and its terminal's foreground process group,
// so a Ctrl-C typed into it (the byte 0x03 on script's stdin, which script
// writes to the terminal's master side) becomes SIGINT from the line
// discipline, for that process group only, as on a real terminal. A pty on
// this machine around nsenter would put nsenter and `timeout` in that group
// too, and the first ^C would end nsenter instead of reaching the command.

/** Ctrl-C as the terminal receives it. */
export const ctrlC = '\x03';

/** A command running on a terminal in the host. */
export interface TerminalSession {
  /** Everything the terminal showed so far, as the bytes arrived (CR LF line ends, escapes). */
  transcript(): string;
  /** Resolves once the transcript matches; throws with it after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Types keys into the terminal (`ctrlC`, `y\r`). */
  type(keys: string): void;
  /** The command's exit code and its transcript once it ended. */
  readonly ended: Promise<TerminalResult>;
}

/** How a terminal command ended. */
export interface TerminalResult {
  readonly exitCode: number;
  /** The raw bytes the terminal received. */
  readonly transcript: string;
  /** What the operator reads on the screen: see {@link renderScreen}. */
  readonly screen: string;
  /** The control sequences the command sent (ESC [ … letter, ESC 7, ESC 8), each once. */
  readonly escapes: readonly string[];
}

/** Shell-quotes one word for `script -c`. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * Runs `argv` on a fresh 120x40 terminal in the host as root with
 * TERM=xterm-256color, in a login-like environment (the harness's clean
 * PATH and HOME), and lets the scenario read what it shows and type into it.
 */
export function openTerminal(
  host: Host,
  argv: readonly string[],
  options: { timeoutMs?: number; env?: Readonly<Record<string, string>> } = {},
): TerminalSession {
  const timeoutMs = options.timeoutMs ?? 240_000;
  // stty sets the size a real terminal has; script gives its pty none.
  const inner = `stty cols 120 rows 40 && exec ${argv.map(quote).join(' ')}`;
  const child = host.spawn(
    ['script', '--quiet', '--return', '--flush', '--command', inner, '/dev/null'],
    { timeoutMs, env: { TERM: 'xterm-256color', ...options.env } },
  );
  const chunks: Buffer[] = [];
  const errors: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => errors.push(chunk));
  child.stdin.on('error', () => undefined);
  const transcript = () => Buffer.concat(chunks).toString('utf8');
  const backstop = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 15_000);
  const ended = new Promise<TerminalResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(backstop);
      child.stdin.end();
      const raw = transcript();
      const scriptErrors = Buffer.concat(errors).toString('utf8');
      // script itself says nothing on stderr; anything there is the harness's problem.
      if (scriptErrors.trim() !== '') {
        reject(new Error(`script on ${host.name} failed: ${scriptErrors}\n${raw}`));
        return;
      }
      resolve({
        exitCode: code ?? 128,
        transcript: raw,
        screen: renderScreen(raw),
        escapes: [...new Set(raw.match(/\x1b\[[?0-9;]*[A-Za-z]|\x1b[78]/g) ?? [])],
      });
    });
  });
  return {
    transcript,
    waitFor: async (pattern, waitMs = 60_000) => {
      const deadline = Date.now() + waitMs;
      while (!pattern.test(transcript())) {
        if (Date.now() >= deadline || child.exitCode !== null) {
          throw new Error(
            `the terminal on ${host.name} never showed ${String(pattern)}\n` +
              formatCommandResult(argv.join(' '), {
                exitCode: child.exitCode ?? -1,
                stdout: renderScreen(transcript()),
                stderr: '',
              } satisfies CommandResult),
          );
        }
        await sleep(100);
      }
    },
    type: (keys) => {
      child.stdin.write(keys);
    },
    ended,
  };
}

/**
 * The screen an operator reads, line by line: carriage returns go back to
 * the start of the line (a redrawn progress bar keeps only its last state),
 * cursor-to-column, erase-in-line and save/restore cursor (within the line)
 * apply, cursor visibility, line wrapping, erase-below and colours are
 * dropped, and a line's trailing spaces go. Any other escape
 * stays in the text, where a test sees it as garbage.
 */
export function renderScreen(raw: string): string {
  const lines: string[] = [];
  let line: (string | undefined)[] = [];
  let column = 0;
  let saved = 0;
  const put = (text: string) => {
    for (const char of text) {
      line[column] = char;
      column += 1;
    }
  };
  const tokens = raw.match(/\x1b\[[?0-9;]*[A-Za-z]|\x1b[78]|\r\n|\r|\n|[^\x1b\r\n]+|\x1b/g) ?? [];
  for (const token of tokens) {
    if (token === '\r\n' || token === '\n') {
      lines.push(
        Array.from(line, (char) => char ?? ' ')
          .join('')
          .trimEnd(),
      );
      line = [];
      column = 0;
    } else if (token === '\r') {
      column = 0;
    } else if (/^\x1b\[\d*G$/.test(token)) {
      column = Math.max(Number(token.slice(2, -1) || '1') - 1, 0);
    } else if (/^\x1b\[[02]?K$/.test(token)) {
      line = token === '\x1b[2K' ? [] : line.slice(0, column);
    } else if (token === '\x1b7') {
      saved = column;
    } else if (token === '\x1b8') {
      column = saved;
    } else if (/^\x1b\[(\?25[lh]|\?7[lh]|0?J|[\d;]*m)$/.test(token)) {
      // Cursor shown or hidden, line wrapping off or on, the screen below
      // cleared, or a colour: nothing to read.
    } else {
      put(token);
    }
  }
  if (line.length > 0)
    lines.push(
      Array.from(line, (char) => char ?? ' ')
        .join('')
        .trimEnd(),
    );
  return lines.join('\n');
}
