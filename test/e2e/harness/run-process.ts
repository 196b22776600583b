import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** What a finished command left behind. `exitCode` is 128 + signal number when a signal ended it. */
export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Input and deadline for {@link runProcess}. */
export interface RunProcessOptions {
  readonly input?: string | Uint8Array;
  /** Kills the process (SIGKILL) after this long; the result then says so in stderr. */
  readonly timeoutMs?: number;
}

/**
 * Runs a host command and collects its output. Resolves for every exit code,
 * because scenarios assert on failures as often as on successes; rejects only
 * when the program cannot be started at all.
 */
export function runProcess(
  argv: readonly string[],
  options: RunProcessOptions = {},
): Promise<CommandResult> {
  const [program, ...args] = argv;
  if (program === undefined) return Promise.reject(new Error('runProcess needs a program'));
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`start ${program}: ${err.message}`, { cause: err }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const note = timedOut ? `\n(killed after ${String(options.timeoutMs)} ms)` : '';
      resolve({
        exitCode: code ?? 128 + (signal === null ? 0 : constants.signals[signal]),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8') + note,
      });
    });
    // A command that exits without reading its input closes the pipe early;
    // that is its business, not an error of the harness.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
  });
}

/** Renders a result for an error message: the command, its exit code and both streams. */
export function formatCommandResult(command: string, result: CommandResult): string {
  return [
    `$ ${command}`,
    `exit code ${result.exitCode}`,
    `--- stdout ---\n${result.stdout.trimEnd()}`,
    `--- stderr ---\n${result.stderr.trimEnd()}`,
  ].join('\n');
}
