import type { FastifyInstance } from 'fastify';
import { apiRoutes, statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { HostSnapshot } from '../host-view.js';
import { createStatusSerializer } from './status-serializer.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/**
 * `GET /v1/status`. A read: it never waits for the activation lock, and it
 * answers from the host view the daemon keeps (see host-view.ts), so a
 * status poll costs no filesystem access. Synchronous when the view is
 * fresh: fastify sends a plain return value without a promise round trip.
 */
export function statusRoutes(deps: SupervisorDeps) {
  const answer = (host: HostSnapshot): StatusResponse => ({
    daemon: {
      pid: deps.daemon.pid,
      uptimeSeconds: Math.max(0, (deps.now() - deps.daemon.startedAt) / 1000),
      executable: deps.daemon.executable,
      socket: deps.daemon.socket,
      socketPath: deps.daemon.socketPath,
    },
    version: deps.version,
    hostRoot: host.hostRoot,
    activationInProgress: host.activationInProgress,
    startup: deps.startup.view(),
  });
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.status,
      schema: { response: { 200: statusResponseSchema } },
      serializerCompiler: () => createStatusSerializer() as (data: unknown) => string,
      handler: () => {
        const host = deps.hostView.read();
        return host instanceof Promise ? host.then(answer) : answer(host);
      },
    });
    return Promise.resolve();
  };
}
