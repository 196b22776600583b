import type { FastifyInstance } from 'fastify';
import {
  apiRoutes,
  hostRootResponseSchema,
  migrateRequestSchema,
  migrateResponseSchema,
} from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/** `GET /v1/host-root` (a read, never waits) and `POST /v1/host-root/migrate` (a mutation). */
export function hostRootRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    const routes = app.withTypeProvider<ZodTypeProvider>();
    routes.route({
      ...apiRoutes.hostRoot,
      schema: { response: { 200: hostRootResponseSchema } },
      handler: () => deps.hostRoot.describe(),
    });
    routes.route({
      ...apiRoutes.migrateHostRoot,
      schema: { body: migrateRequestSchema, response: { 200: migrateResponseSchema } },
      handler: () => deps.runMutation('a host-root migration', () => deps.hostRoot.migrate()),
    });
    return Promise.resolve();
  };
}
