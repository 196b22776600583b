import type { FastifyInstance } from 'fastify';
import { apiRoutes, operationSchema, resetRequestSchema } from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/**
 * `POST /v1/reset`: 202 with the operation once the reset holds the activation
 * lock, 409 at once when another mutation does. Its progress and outcome are
 * read like an upgrade's, from `/v1/operations/{id}` and its event stream.
 */
export function resetRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.beginReset,
      schema: { body: resetRequestSchema, response: { 202: operationSchema } },
      handler: async (_request, reply) => reply.status(202).send(await deps.reset.begin()),
    });
    return Promise.resolve();
  };
}
