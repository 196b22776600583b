import type { FastifyInstance } from 'fastify';
import { apiRoutes, statusResponseSchema } from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/** `GET /v1/status`. A read: it never waits for the activation lock. */
export function statusRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.status,
      schema: { response: { 200: statusResponseSchema } },
      handler: async () => {
        const hostRoot = await deps.hostRoot.describe();
        const activationInProgress = await deps.isActivationInProgress();
        return {
          daemon: {
            pid: deps.daemon.pid,
            uptimeSeconds: Math.max(0, (deps.now() - deps.daemon.startedAt) / 1000),
            executable: deps.daemon.executable,
            socket: deps.daemon.socket,
            socketPath: deps.daemon.socketPath,
          },
          version: deps.version,
          hostRoot,
          activationInProgress,
          startup: deps.startup.view(),
        };
      },
    });
    return Promise.resolve();
  };
}
