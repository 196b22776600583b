import type { FastifyInstance } from 'fastify';
import {
  apiRoutes,
  hostRootResponseSchema,
  migrateRequestSchema,
  migrateResponseSchema,
} from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/** `GET /v1/host-root`: a read, never waits. */
export function hostRootRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.hostRoot,
      schema: { response: { 200: hostRootResponseSchema } },
      handler: () => deps.hostRoot.describe(),
    });
    return Promise.resolve();
  };
}

/** `POST /v1/host-root/migrate`: a mutation, behind the startup gate (gated-routes.ts). */
export function hostRootChangeRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.migrateHostRoot,
      schema: { body: migrateRequestSchema, response: { 200: migrateResponseSchema } },
      handler: () => deps.runMutation('a host-root migration', () => deps.hostRoot.migrate()),
    });
    return Promise.resolve();
  };
}
