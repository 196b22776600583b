import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { AgentError, errnoCode, messageOf } from '@aks-flex-node/log';

/** A held `flock(2)` lock. `release` is idempotent. */
export interface FlockHandle {
  readonly path: string;
  release(): Promise<void>;
}

/** The exit status `flock(1)` is told to use when another process holds the lock. */
const CONFLICT_EXIT = 75;
/** What the child prints once it holds the lock, so "held" is never guessed from a timer. */
const HELD_LINE = 'held';

/**
 * Takes an exclusive `flock` on `lockPath` without waiting; resolves undefined
 * when another process holds it.
 *
 * Node has no flock(2), so a `flock(1)` child (util-linux) holds the lock on
 * our behalf and waits on its stdin pipe. Only this process holds the pipe's
 * write end, so when it exits, however it dies, the kernel closes the pipe,
 * the child ends and the kernel frees the lock: nothing stale is left, as
 * with the Go releases' own flock.
 *
 * Throws HOST_ROOT_IO when `flock(1)` is missing or cannot open the file.
 */
export async function tryFlock(lockPath: string): Promise<FlockHandle | undefined> {
  const child = spawn(
    'flock',
    [
      '--exclusive',
      '--nonblock',
      '--conflict-exit-code',
      String(CONFLICT_EXIT),
      lockPath,
      'sh',
      '-c',
      `echo ${HELD_LINE}; exec cat >/dev/null`,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  // A write to a child that already exited must not crash the holder.
  child.stdin.on('error', () => undefined);

  const outcome = await new Promise<'held' | 'busy'>((resolve, reject) => {
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes(`${HELD_LINE}\n`)) resolve('held');
    });
    child.once('error', (error) => {
      reject(
        new AgentError('HOST_ROOT_IO', `take ${lockPath}: run flock(1): ${messageOf(error)}`, {
          path: lockPath,
          hint:
            errnoCode(error) === 'ENOENT'
              ? 'install util-linux, which provides flock(1), then try again'
              : 'check that the lock file can be created and opened by root',
          cause: error,
        }),
      );
    });
    void exited.then(([code, signal]) => {
      if (code === CONFLICT_EXIT) {
        resolve('busy');
        return;
      }
      reject(
        new AgentError(
          'HOST_ROOT_IO',
          `take ${lockPath}: flock(1) ended with ${signal ?? `exit status ${String(code)}`}: ${stderr.trim()}`,
          { path: lockPath },
        ),
      );
    }, reject);
  });
  if (outcome === 'busy') return undefined;

  // The child must not keep this process alive: a holder that exits without
  // releasing still frees the lock, because its end of the pipe closes.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as Socket).unref();
  let released: Promise<void> | undefined;
  return {
    path: lockPath,
    release: () => {
      released ??= (async () => {
        // Ref'd again while we wait for the child to end: awaiting an unref'd
        // child alone would let the event loop run dry and the process exit
        // in the middle of its caller's work.
        child.ref();
        child.stdin.end();
        if (child.exitCode === null && child.signalCode === null) await exited;
      })();
      return released;
    },
  };
}
