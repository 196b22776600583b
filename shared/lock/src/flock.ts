import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { runBuiltin, type CommandResult } from '@aks-flex-node/fs';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { lockFileMode, makeRootOnly } from './root-only.js';

/** A held `flock(2)` lock. `release` is idempotent. */
export interface FlockHandle {
  readonly path: string;
  release(): Promise<void>;
}

/** The exit status `flock(1)` is told to use when another process holds the lock. */
const CONFLICT_EXIT = 75;

/**
 * Open lock files, so a holder that dropped its handle without releasing
 * still holds the lock: a FileHandle that is garbage-collected is closed,
 * which would free the lock behind the holder's back.
 */
const held = new Set<FileHandle>();

/**
 * Takes an exclusive `flock` on `lockPath` without waiting; resolves undefined
 * when another process holds it.
 *
 * Node has no flock(2), so this process opens the file and a short-lived
 * `flock(1)` (util-linux) locks the descriptor it inherits, then exits: a
 * flock belongs to the open file, which this process keeps open, so the lock
 * stays ours until `release` closes it, or the kernel closes it when this
 * process dies however it dies: nothing stale is left, as with the Go
 * releases' own flock. Node opens files close-on-exec, so no child of ours
 * inherits it. (A flock(1) kept running as the holder cost about three
 * process starts per lock, a third of an activation's switch.)
 *
 * The file is made root's alone (0600) at every call, through the open
 * descriptor: flock(2) needs only read access, so a file others can read is
 * a lock any local user can hold.
 *
 * Throws HOST_ROOT_IO when the file cannot be opened or tightened, is not a
 * regular file, or `flock(1)` is missing.
 */
export async function tryFlock(lockPath: string): Promise<FlockHandle | undefined> {
  let handle: FileHandle;
  try {
    // Read-only, created if missing, as flock(1) opens a file it is given by
    // name; 0600 as the Go releases create it (they open it as root, so the
    // mode keeps them working). O_NOFOLLOW: a link at the name is refused;
    // O_NONBLOCK: a FIFO at the name cannot hang the open (it is refused below).
    handle = await open(
      lockPath,
      constants.O_RDONLY |
        constants.O_CREAT |
        constants.O_NOCTTY |
        constants.O_NOFOLLOW |
        constants.O_NONBLOCK,
      lockFileMode,
    );
  } catch (error) {
    throw new AgentError('HOST_ROOT_IO', `take ${lockPath}: open: ${messageOf(error)}`, {
      path: lockPath,
      hint: 'check that the lock file can be created and opened by root',
      cause: error,
    });
  }
  let taken = false;
  try {
    // Before the flock, so a refusal tightens too: the next holder who is not
    // root cannot open it again (see held-lock-refusal.ts for one that already has).
    await refuseIfNotRegular(handle, lockPath);
    await makeRootOnly(handle, lockFileMode, lockPath);
    taken = await lockDescriptor(handle, lockPath);
  } finally {
    if (!taken) await handle.close();
  }
  if (!taken) return undefined;
  held.add(handle);
  let released: Promise<void> | undefined;
  return {
    path: lockPath,
    release: () => {
      released ??= handle.close().finally(() => held.delete(handle));
      return released;
    },
  };
}

async function refuseIfNotRegular(handle: FileHandle, lockPath: string): Promise<void> {
  if ((await handle.stat()).isFile()) return;
  throw new AgentError('HOST_ROOT_IO', `take ${lockPath}: not a regular file`, {
    path: lockPath,
    hint: `inspect ${lockPath}; a lock file is an empty regular file: remove what is there and try again`,
  });
}

/**
 * How long flock(1) may take: it never waits (--nonblock), so only a machine
 * that cannot start a process at all comes near this.
 */
const flockTimeoutMs = 30_000;

/**
 * Runs `flock(1)` on the open file as the child's fd 3: true when it took the
 * lock, false when held elsewhere. Through the hot roles' runner: the lock is
 * taken on the activation switch's path (shared/fs/src/run-builtin.ts).
 */
async function lockDescriptor(handle: FileHandle, lockPath: string): Promise<boolean> {
  let result: CommandResult;
  try {
    result = await runBuiltin(
      'flock',
      ['--exclusive', '--nonblock', '--conflict-exit-code', String(CONFLICT_EXIT), '3'],
      flockTimeoutMs,
      { fd3: handle.fd },
    );
  } catch (error) {
    const missing = (error as { cause?: { code?: unknown } }).cause?.code === 'ENOENT';
    throw new AgentError('HOST_ROOT_IO', `take ${lockPath}: run flock(1): ${messageOf(error)}`, {
      path: lockPath,
      hint: missing
        ? 'install util-linux, which provides flock(1), then try again'
        : 'check that flock(1) can run',
      cause: error,
    });
  }
  if (result.exitCode === 0) return true;
  if (result.exitCode === CONFLICT_EXIT) return false;
  throw new AgentError(
    'HOST_ROOT_IO',
    `take ${lockPath}: flock(1) ended with exit status ${String(result.exitCode)}: ${result.stderr.trim()}`,
    { path: lockPath },
  );
}
