import type { FastifyInstance } from 'fastify';
import { apiRoutes, statusResponseSchema } from '@aks-flex-node/api';
import type { StatusAnswer } from './status-answer.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/**
 * `GET /v1/status`. A read: it never waits for the activation lock, and it
 * answers from the host view the daemon keeps (see host-view.ts), so a
 * status poll costs no filesystem access. Synchronous when the view is
 * fresh: fastify sends a plain return value without a promise round trip.
 * On a listening daemon most polls are answered before fastify by the
 * server's fast path, with the same answer; this route takes the rest (a
 * view to refresh first, a query string, HEAD, a daemon shutting down).
 */
export function statusRoutes(status: StatusAnswer) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.status,
      schema: { response: { 200: statusResponseSchema } },
      serializerCompiler: () => status.serialize as (data: unknown) => string,
      handler: () => status.read(),
    });
    return Promise.resolve();
  };
}
