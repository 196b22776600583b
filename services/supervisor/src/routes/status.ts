import type { FastifyInstance } from 'fastify';
import { apiRoutes, statusResponseSchema, type StatusResponse } from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/** What the status route reads. */
export type StatusDeps = Pick<
  SupervisorDeps,
  'daemon' | 'now' | 'version' | 'startup' | 'hostView'
> & {
  operations: Pick<SupervisorDeps['operations'], 'running' | 'lastFinished'>;
  upgrades: Pick<SupervisorDeps['upgrades'], 'machineCopyView'>;
};

/**
 * `GET /v1/status`. A read: it never waits for the activation lock, and it
 * looks at the host as it is now (host-view.ts).
 */
export function statusRoutes(deps: StatusDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.status,
      schema: { response: { 200: statusResponseSchema } },
      handler: () => statusAnswer(deps),
    });
    return Promise.resolve();
  };
}

async function statusAnswer(deps: StatusDeps): Promise<StatusResponse> {
  const host = await deps.hostView.read();
  const machineCopy = deps.upgrades.machineCopyView();
  const running = deps.operations.running();
  const last = deps.operations.lastFinished();
  const operations = {
    ...(running === undefined ? {} : { running }),
    ...(last === undefined ? {} : { last }),
  };
  return {
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
    ...(machineCopy === undefined ? {} : { machineCopy }),
    ...(running === undefined && last === undefined ? {} : { operations }),
  };
}
