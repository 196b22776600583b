import type { FastifyInstance } from 'fastify';
import {
  apiRoutes,
  operationParamsSchema,
  operationSchema,
  recoveryRequestSchema,
  recoveryResponseSchema,
} from '@aks-flex-node/api';
import type { UpgradeService } from '../upgrade/upgrade-service.js';
import { operationNotFound } from './operation-not-found.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/**
 * `GET /v1/operations/{id}`, and `POST /v1/recovery` for the recovery shim:
 * a change, but not behind the startup gate, since it is what brings back a
 * failed upgrade. The event stream is its own plugin, and the upgrade request
 * its own module (agent-upgrades.ts), so the request reaches none of this.
 */
export function operationAndRecoveryRoutes(deps: {
  upgrades: Pick<UpgradeService, 'get' | 'recover'>;
}) {
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
