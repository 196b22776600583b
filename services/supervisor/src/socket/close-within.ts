import type { FastifyInstance } from 'fastify';
import type { Logger } from '@aks-flex-node/log';
import { closeConnections, stopAccepting } from './connection-drain.js';

/** How long shutdown waits for requests in flight before it cuts their connections. */
export const shutdownGraceMs = 5_000;

/**
 * Closes the app, letting requests in flight finish for at most `graceMs`;
 * then every connection still open is destroyed. Without the bound a client
 * that sent half a request and waits keeps the daemon alive after SIGTERM,
 * and the restart planned after an upgrade's switch with it. First it stops
 * accepting and waits for the connections it accepted to send their
 * requests, so none is cut off unanswered: a client that connects from now
 * on waits in systemd's socket for the next daemon instead.
 */
export async function closeWithin(
  app: FastifyInstance,
  graceMs: number,
  log: Logger,
): Promise<void> {
  const timer = setTimeout(() => {
    log.warn(
      { graceMs },
      'requests still open after the shutdown grace period; closing their connections',
    );
    app.server.closeAllConnections();
  }, graceMs);
  try {
    await stopAccepting(app.server);
    // From here fastify answers with `Connection: close`.
    await app.close();
    await closeConnections(app.server);
  } finally {
    clearTimeout(timer);
  }
}
