import type { FastifyInstance } from 'fastify';
import {
  agentUpgradeRequestSchema,
  apiRoutes,
  operationParamsSchema,
  operationSchema,
} from '@aks-flex-node/api';
import type { UpgradeRequests } from '../upgrade/upgrade-requests.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/**
 * `POST /v1/agent-upgrades` (a mutation: 202 once it holds the lock, 409 at
 * once when another runs) and `DELETE /v1/operations/{id}` (cancel, before
 * the switch); both behind the startup gate (gated-routes.ts). They take the
 * requests alone, so the request's path is route → requests → switch, and
 * nothing that runs after the switch is on it.
 */
export function agentUpgradeChangeRoutes(deps: { upgrades: UpgradeRequests }) {
  return (app: FastifyInstance): Promise<void> => {
    const routes = app.withTypeProvider<ZodTypeProvider>();
    routes.route({
      ...apiRoutes.beginAgentUpgrade,
      schema: { body: agentUpgradeRequestSchema, response: { 202: operationSchema } },
      handler: async (request, reply) =>
        reply.status(202).send(await deps.upgrades.begin(request.body)),
    });
    // Cancels an upgrade that has not begun to switch; answers once it stopped.
    routes.route({
      ...apiRoutes.cancelOperation,
      schema: { params: operationParamsSchema, response: { 200: operationSchema } },
      handler: (request) => deps.upgrades.cancel(request.params.id),
    });
    return Promise.resolve();
  };
}
