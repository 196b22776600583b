import type { FastifyInstance } from 'fastify';
import { operationSchema, resetRequestSchema } from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import { parseBody } from '../parse-body.js';

/**
 * `POST /v1/reset`: 202 with the operation once the reset holds the activation
 * lock, 409 at once when another mutation does. Its progress and outcome are
 * read like an upgrade's, from `/v1/operations/{id}` and its event stream.
 */
export function resetRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.post('/v1/reset', async (request, reply) => {
      parseBody(resetRequestSchema, request.body ?? {}, 'POST /v1/reset');
      const operation = await deps.reset.begin();
      return reply.status(202).send(operationSchema.parse(operation));
    });
    return Promise.resolve();
  };
}
