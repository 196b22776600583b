import type { FastifyInstance } from 'fastify';
import {
  agentUpgradeRequestSchema,
  apiRoutes,
  operationParamsSchema,
  operationSchema,
  recoveryRequestSchema,
  recoveryResponseSchema,
} from '@aks-flex-node/api';
import type { UpgradeService } from '../upgrade/upgrade-service.js';
import { operationNotFound } from './operation-not-found.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/** What the upgrade routes use: the service itself, so the request's path is route → service → switch. */
interface UpgradeRouteDeps {
  upgrades: UpgradeService;
}

/**
 * `GET /v1/operations/{id}`, and `POST /v1/recovery` for the recovery shim:
 * a change, but not behind the startup gate, since it is what brings back a
 * failed upgrade. The event stream is its own plugin.
 */
export function agentUpgradeRoutes(deps: UpgradeRouteDeps) {
  return (app: FastifyInstance): Promise<void> => {
    const routes = app.withTypeProvider<ZodTypeProvider>();
    routes.route({
      ...apiRoutes.operation,
      schema: { params: operationParamsSchema, response: { 200: operationSchema } },
      handler: async (request) => {
        const operation = await deps.upgrades.get(request.params.id);
        if (operation === undefined) throw operationNotFound(request.params.id);
        return operation;
      },
    });
    routes.route({
      ...apiRoutes.recover,
      schema: { body: recoveryRequestSchema, response: { 200: recoveryResponseSchema } },
      handler: (request) => deps.upgrades.recover(request.body.message),
    });
    return Promise.resolve();
  };
}

/**
 * `POST /v1/agent-upgrades` (a mutation: 202 once it holds the lock, 409 at
 * once when another runs) and `DELETE /v1/operations/{id}` (cancel, before
 * the switch); both behind the startup gate (gated-routes.ts).
 */
export function agentUpgradeChangeRoutes(deps: UpgradeRouteDeps) {
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
