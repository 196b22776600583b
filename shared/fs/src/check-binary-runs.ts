import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { AgentError } from '@aks-flex-node/log';

const execFileAsync = promisify(execFile);

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
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal =
    options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  try {
    const { stdout } = await execFileAsync(binary, args, {
      signal,
      // A probe that ignores SIGTERM must not hang the caller.
      killSignal: 'SIGKILL',
      encoding: 'utf8',
    });
    return stdout;
  } catch (error) {
    const reason = timeout.aborted ? `did not exit within ${timeoutMs} ms` : describeFailure(error);
    throw new AgentError('NOT_EXECUTABLE', `run ${[binary, ...args].join(' ')}: ${reason}`, {
      path: binary,
      cause: error,
      hint:
        `check that ${binary} exists and has execute permission, and that the filesystem ` +
        `holding ${path.dirname(binary)} is not mounted noexec (mount | grep noexec)`,
    });
  }
}

/** Exit code, signal or spawn errno first, then the end of stderr. */
function describeFailure(error: unknown): string {
  const { code, signal, stderr } = error as { code?: unknown; signal?: unknown; stderr?: unknown };
  let reason: string;
  if (typeof code === 'string') reason = `it could not be started (${code})`;
  else if (typeof signal === 'string') reason = `killed by signal ${signal}`;
  else if (typeof code === 'number') reason = `exit code ${code}`;
  else reason = error instanceof Error ? error.message : String(error);
  const tail = typeof stderr === 'string' ? stderr.trim().slice(-stderrTailChars) : '';
  return tail === '' ? reason : `${reason}; stderr: ${tail}`;
}
