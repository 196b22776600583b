import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { AgentError, messageOf } from '@aks-flex-node/log';

/** A held `flock(2)` lock. `release` is idempotent. */
export interface FlockHandle {
  readonly path: string;
  release(): Promise<void>;
}

/** flock(1)'s exit code when the lock is held elsewhere (`--conflict-exit-code`). */
const conflictExitCode = 75;

/**
 * Takes an exclusive `flock(2)` on `path` without waiting, creating the file
 * (0600) when missing. Resolves undefined when another open file holds it.
 *
 * Node has no flock(2), so flock(1) locks a descriptor this process opened
 * and passes it as fd 3, then exits. The lock belongs to the open file
 * description, which this process keeps: the kernel frees it when the
 * descriptor closes, on release or when this process dies, however it dies.
 *
 * Throws HOST_ROOT_IO when the file cannot be opened or flock(1) fails.
 */
export async function tryFlock(path: string): Promise<FlockHandle | undefined> {
  const file = await open(path, 'a', 0o600).catch((error: unknown) => {
    throw new AgentError('HOST_ROOT_IO', `open ${path} to lock it: ${messageOf(error)}`, {
      path,
      cause: error,
    });
  });
  let exitCode: number;
  try {
    exitCode = await runFlock(
      ['--exclusive', '--nonblock', '--conflict-exit-code', `${conflictExitCode}`, '3'],
      file.fd,
    );
  } catch (error) {
    await file.close();
    throw new AgentError('HOST_ROOT_IO', `lock ${path} with flock: ${messageOf(error)}`, {
      path,
      hint: 'flock(1) comes with util-linux; check that it is installed',
      cause: error,
    });
  }
  if (exitCode === conflictExitCode) {
    await file.close();
    return undefined;
  }
  let released = false;
  return {
    path,
    release: async () => {
      if (released) return;
      released = true;
      // Closing the last descriptor of the description drops the lock.
      await file.close();
    },
  };
}

function runFlock(args: string[], fd: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', args, { stdio: ['ignore', 'ignore', 'pipe', fd] });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === null) {
        reject(new Error(`flock was killed by ${String(signal)}: ${stderr.trim()}`));
      } else if (code !== 0 && code !== conflictExitCode) {
        reject(new Error(`flock exited ${code}: ${stderr.trim()}`));
      } else {
        resolve(code);
      }
    });
  });
}
