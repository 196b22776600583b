import net from 'node:net';
import { AgentError } from '@aks-flex-node/log';

/** A held single-instance guard. */
export interface SingleInstanceGuard {
  release(): Promise<void>;
}

/**
 * Makes sure only one daemon serves a socket path. It binds an abstract Unix
 * socket named after the path: the kernel gives such a name to one process at
 * a time and frees it when the process dies, so a crashed daemon never leaves
 * a stale guard behind (unlike a lock file) and the next start needs no cleanup.
 *
 * Throws DAEMON_RUNNING when another daemon holds it.
 */
export async function holdSingleInstance(socketPath: string): Promise<SingleInstanceGuard> {
  const server = net.createServer((connection) => connection.destroy());
  const name = `\0aks-flex-node-daemon:${socketPath}`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new AgentError(
            'DAEMON_RUNNING',
            `another aks-flex-node daemon already serves ${socketPath}`,
            {
              path: socketPath,
              hint: 'check it with `systemctl status aks-flex-node-agent`; stop it before starting another by hand',
            },
          ),
        );
      } else {
        reject(
          new AgentError('INTERNAL', `take the daemon guard for ${socketPath}: ${error.message}`, {
            cause: error,
          }),
        );
      }
    });
    server.listen(name, resolve);
  });
  server.unref();
  return {
    release: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  };
}
