import {
  LogController,
  fastify,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerFactory,
} from 'fastify';
import { apiRoutes, requestBodyLimitBytes } from '@aks-flex-node/api';
import type { SupervisorDeps } from './deps.js';
import { handleError } from './error-handler.js';
import { agentUpgradeRoutes } from './routes/agent-upgrades.js';
import { hostRootRoutes } from './routes/host-root.js';
import { operationEventRoutes } from './routes/operation-events.js';
import { statusRoutes } from './routes/status.js';
import { zodSerializerCompiler, zodValidatorCompiler } from './routes/zod-type-provider.js';

/** Options for {@link buildApp} that concern the server, not the routes. */
export interface BuildAppOptions {
  serverFactory?: FastifyServerFactory;
}

/**
 * Builds the API without binding anything, so tests drive it with inject().
 * One plugin per resource, each route carrying its schemas; the error handler
 * turns every error into problem+json.
 */
export async function buildApp(
  deps: SupervisorDeps,
  options: BuildAppOptions = {},
): Promise<FastifyInstance> {
  // Typed as fastify's base logger so the instance is a plain FastifyInstance.
  const loggerInstance: FastifyBaseLogger = deps.log;
  const app = fastify({
    loggerInstance,
    bodyLimit: requestBodyLimitBytes,
    // The socket is local and root-only, but a stuck client must not pin a request forever.
    requestTimeout: 120_000,
    // Status polls would flood the journal; refusals and failures are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    ...(options.serverFactory === undefined ? {} : { serverFactory: options.serverFactory }),
  });
  // Each route declares its body, params and responses as zod schemas.
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request, reply) =>
    handleError(
      Object.assign(new Error(`no route ${request.method} ${request.url}`), {
        statusCode: 404,
        code: 'NOT_FOUND',
        name: 'NotFound',
      }),
      request,
      reply,
    ),
  );
  // The startup gate: reads are always served; a change is refused at once
  // while the daemon starts, moves its files or waits to be replaced, never
  // left waiting. Recovery is exempt: it is what brings back a failed upgrade.
  app.addHook('onRequest', (request, _reply, done) => {
    const exempt =
      request.method === 'GET' ||
      request.method === 'HEAD' ||
      request.routeOptions.url === apiRoutes.recover.url;
    done(exempt ? undefined : deps.startup.refusal(`${request.method} ${request.url}`));
  });
  await app.register(statusRoutes(deps));
  await app.register(hostRootRoutes(deps));
  await app.register(agentUpgradeRoutes(deps));
  await app.register(operationEventRoutes(deps));
  return app;
}
