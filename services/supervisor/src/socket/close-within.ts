import type { FastifyInstance } from 'fastify';
import type { Logger } from '@aks-flex-node/log';

/** How long shutdown waits for requests in flight before it cuts their connections. */
export const shutdownGraceMs = 5_000;

/**
 * Closes the app, letting requests in flight finish for at most `graceMs`;
 * then every connection still open is destroyed. Without the bound a client
 * that sent half a request and waits keeps the daemon alive after SIGTERM,
 * and the restart planned after an upgrade's switch with it.
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
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}
