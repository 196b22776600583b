import path from 'node:path';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { runCommand, type CommandResult } from './run-command.js';

/** Options for {@link checkBinaryRuns}. */
export interface CheckBinaryRunsOptions {
  /** Arguments to run it with; every release answers `version`. */
  args?: readonly string[];
  /** How long it may take before it is killed and counted as not running. */
  timeoutMs?: number;
  /** Cancels the check (the binary is killed). */
  signal?: AbortSignal;
}

const stderrTailChars = 400;

/**
 * Runs `binary` (no shell) and resolves with its stdout when it exits 0.
 * Anything else is `NOT_EXECUTABLE`: a binary that cannot run where it is
 * installed (noexec mount, no execute bit, SELinux denial, wrong arch) would
 * strand a unit that names it, and a Type=simple unit reports a successful
 * start either way, so this is the last point that can tell.
 */
export async function checkBinaryRuns(
  binary: string,
  options: CheckBinaryRunsOptions = {},
): Promise<string> {
  const args = [...(options.args ?? ['version'])];
  const timeoutMs = options.timeoutMs ?? 10_000;
  let reason: string;
  let cause: unknown;
  try {
    const result = await runCommand(binary, args, timeoutMs, {
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      // A probe that ignores SIGTERM must not hang the caller.
      killSignal: 'SIGKILL',
      // Its callers read what it printed, as printed.
      keepFinalNewline: true,
    });
    if (result.exitCode === 0) return result.stdout;
    reason = withStderr(`exit code ${result.exitCode}`, result);
  } catch (error) {
    cause = error;
    reason = describeFailure(error, timeoutMs);
  }
  throw new AgentError('NOT_EXECUTABLE', `run ${[binary, ...args].join(' ')}: ${reason}`, {
    path: binary,
    cause,
    hint:
      `check that ${binary} exists and has execute permission, and that the filesystem ` +
      `holding ${path.dirname(binary)} is not mounted noexec (mount | grep noexec)`,
  });
}

/** A run that did not exit: timed out, killed by a signal, or never started (its errno). */
function describeFailure(error: unknown, timeoutMs: number): string {
  const result = (error as { cause?: unknown }).cause as
    { timedOut?: boolean; signal?: string; code?: string; stderr?: string } | undefined;
  if (result?.timedOut === true) return `did not exit within ${timeoutMs} ms`;
  if (typeof result?.code === 'string') return `it could not be started (${result.code})`;
  if (typeof result?.signal === 'string') {
    return withStderr(`killed by signal ${result.signal}`, { stderr: result.stderr ?? '' });
  }
  return messageOf(error);
}

/** The reason, then the end of stderr. */
function withStderr(reason: string, result: Pick<CommandResult, 'stderr'>): string {
  const tail = result.stderr.trim().slice(-stderrTailChars);
  return tail === '' ? reason : `${reason}; stderr: ${tail}`;
}
