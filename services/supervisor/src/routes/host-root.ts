import type { FastifyInstance } from 'fastify';
import {
  hostRootResponseSchema,
  migrateRequestSchema,
  migrateResponseSchema,
} from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import { parseBody } from '../parse-body.js';

/** `GET /v1/host-root` (a read, never waits) and `POST /v1/host-root/migrate` (a mutation). */
export function hostRootRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.get('/v1/host-root', async () =>
      hostRootResponseSchema.parse(await deps.hostRoot.describe()),
    );
    app.post('/v1/host-root/migrate', async (request) => {
      parseBody(migrateRequestSchema, request.body, 'POST /v1/host-root/migrate');
      const result = await deps.runMutation('a host-root migration', () => deps.hostRoot.migrate());
      return migrateResponseSchema.parse(result);
    });
    return Promise.resolve();
  };
}
