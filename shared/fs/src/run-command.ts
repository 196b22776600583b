import { execa } from 'execa';
import { AgentError } from '@aks-flex-node/log';

/** What a finished command printed and how it ended. */
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** What a caller may add to a run: cancelling it, and how it is killed. */
export interface CommandOptions {
  /** Cancels the command (it is killed). */
  signal?: AbortSignal;
  /** How a timed-out or cancelled command is killed; SIGTERM unless said. */
  killSignal?: NodeJS.Signals;
  /** The output exactly as printed; otherwise without its final newline. */
  keepFinalNewline?: boolean;
}

/** Runs a program and reports how it ended; the one place that calls execa (run-builtin.ts is the hot roles'). */
export type CommandRunner = (
  file: string,
  args: readonly string[],
  timeoutMs: number,
  options?: CommandOptions,
) => Promise<CommandResult>;

/**
 * The real runner: no shell, a timeout, output captured, and never rejecting
 * on a non-zero exit so callers decide what a failure means.
 */
export const runCommand: CommandRunner = async (file, args, timeoutMs, options = {}) => {
  const result = await execa(file, args, {
    reject: false,
    timeout: timeoutMs,
    ...(options.signal === undefined ? {} : { cancelSignal: options.signal }),
    ...(options.killSignal === undefined ? {} : { killSignal: options.killSignal }),
    stripFinalNewline: options.keepFinalNewline !== true,
    stdin: 'ignore',
    all: false,
    // A command outlives nothing it should not: the daemon awaits its commands
    // at shutdown, and one it queued (a restart of its own unit) must finish.
    cleanup: false,
  });
  // Killed, timed out or never started: the callers wrap this with their own code and hint.
  if (result.failed && result.exitCode === undefined) {
    throw new AgentError(
      'SYSTEMD_FAILED',
      `run ${file} ${args.join(' ')}: ${result.shortMessage}`,
      {
        path: file,
        cause: result,
      },
    );
  }
  return {
    exitCode: result.exitCode ?? 1,
    stdout: result.stdout,
    stderr: result.stderr,
  };
};

/**
 * The signal another process sent to end a command {@link runCommand} threw
 * for; undefined for any other failure, its own timeout's kill included.
 * For a caller whose own command can be caught in a stop it queued.
 */
export function signalThatEndedCommand(error: unknown): string | undefined {
  // Through the errors that wrap it (the Systemctl wrapper's around the runner's).
  let cause = error instanceof AgentError ? error.cause : undefined;
  while (cause instanceof AgentError) cause = cause.cause;
  if (typeof cause !== 'object' || cause === null) return undefined;
  const { signal, timedOut } = cause as { signal?: unknown; timedOut?: unknown };
  return typeof signal === 'string' && timedOut !== true ? signal : undefined;
}
