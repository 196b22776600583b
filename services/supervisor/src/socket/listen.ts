import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { AgentError, isNotFound, messageOf } from '@aks-flex-node/log';
import { watchConnections } from './connection-drain.js';

/** Where the daemon serves: a descriptor systemd passed, or a path it binds itself. */
export type ListenTarget =
  { kind: 'systemd'; fd: number } | { kind: 'self-bound'; socketPath: string };

/**
 * Starts the server on its target. When binding itself it creates the run
 * directory 0750 and the socket 0600, both root's: the API changes the host.
 * Its connections are followed from the first, so `closeWithin` answers
 * every one it accepted.
 */
export async function listenOn(server: Server, target: ListenTarget): Promise<void> {
  watchConnections(server);
  if (target.kind === 'systemd') {
    await listen(server, { fd: target.fd });
    return;
  }
  const dir = path.dirname(target.socketPath);
  await mkdir(dir, { recursive: true, mode: 0o750 });
  await chmod(dir, 0o750);
  await removeStaleSocket(target.socketPath);
  // Bind under a restrictive umask so the socket is never reachable with wider
  // permissions, even for the moment before the chmod below.
  const previousUmask = process.umask(0o177);
  try {
    await listen(server, { path: target.socketPath });
  } finally {
    process.umask(previousUmask);
  }
  await chmod(target.socketPath, 0o600);
}

function listen(server: Server, options: { fd: number } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * A socket file left by a daemon that died cannot be bound over. The caller
 * already holds the single-instance guard, so no live daemon owns this path.
 */
async function removeStaleSocket(socketPath: string): Promise<void> {
  try {
    const info = await lstat(socketPath);
    if (!info.isSocket()) {
      throw new AgentError('INTERNAL', `${socketPath} exists and is not a socket`, {
        path: socketPath,
        hint: `move it away; the daemon serves its API there`,
      });
    }
    await unlink(socketPath);
  } catch (error) {
    if (isNotFound(error)) return;
    if (error instanceof AgentError) throw error;
    throw new AgentError('INTERNAL', `remove the stale socket ${socketPath}: ${messageOf(error)}`, {
      path: socketPath,
      cause: error,
    });
  }
}
