import type { ChildProcess } from 'node:child_process';
import { AgentError } from '@aks-flex-node/log';
import type { CommandOptions, CommandResult } from './run-command.js';

/** What runBuiltin adds to a run: a descriptor handed to the command. */
export interface BuiltinCommandOptions extends CommandOptions {
  /** An open descriptor the command gets as its fd 3 (flock(1) locks it). */
  fd3?: number;
}

/**
 * The runner of the hot roles (the nspawn hook, `status`, the lock), with the
 * same contract as {@link runCommand}: no shell, a timeout, output captured,
 * a non-zero exit reported, not thrown; killed, timed out or never started
 * thrown as SYSTEMD_FAILED with the cause `signalThatEndedCommand` reads.
 *
 * Why a second runner: execa is 280 KB bundled and loading it took 37–250 ms
 * (median 173 ms, 7 runs, node 24 on the 2-core CI machine under load:
 * `require` of an esbuild bundle of execa 10.2.1), against 0.05 ms for
 * node:child_process, which Node already holds. The nspawn hook runs at every
 * machine start and `status` at every operator's look, so their bundles hold
 * no execa (scripts/build.mjs refuses it). node:child_process is loaded when
 * the first command runs, not when the module is: most starts of these roles
 * run none. getBuiltinModule rather than import(), which the executable's
 * bundles do not support (services/cli/src/roles/evaluate-common-js.ts).
 *
 * Only this file and run-command.ts start processes
 * (test/layers/subprocess-runner.test.ts).
 */
export function runBuiltin(
  file: string,
  args: readonly string[],
  timeoutMs: number,
  options: BuiltinCommandOptions = {},
): Promise<CommandResult> {
  const { spawn } = process.getBuiltinModule('node:child_process');
  const child: ChildProcess = spawn(file, args, {
    stdio: ['ignore', 'pipe', 'pipe', ...(options.fd3 === undefined ? [] : [options.fd3])],
    timeout: timeoutMs,
    killSignal: options.killSignal ?? 'SIGTERM',
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const trim = (text: string) =>
    options.keepFinalNewline === true ? text : text.replace(/\r?\n$/, '');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let failure: Error | undefined;
    child.on('error', (error) => {
      failure ??= error;
    });
    child.on('close', (code, signal) => {
      if (code !== null && failure === undefined) {
        resolve({ exitCode: code, stdout: trim(stdout), stderr: trim(stderr) });
        return;
      }
      // Its own timeout's kill is told apart from another process's signal, as execa does.
      const timedOut = signal !== null && performance.now() - started >= timeoutMs;
      const what =
        failure !== undefined
          ? failure.message
          : timedOut
            ? `timed out after ${timeoutMs} ms`
            : `killed by ${String(signal)}`;
      reject(
        new AgentError('SYSTEMD_FAILED', `run ${file} ${args.join(' ')}: ${what}`, {
          path: file,
          cause: {
            message: what,
            signal: signal ?? undefined,
            timedOut,
            code: (failure as NodeJS.ErrnoException | undefined)?.code,
          },
        }),
      );
    });
  });
}
