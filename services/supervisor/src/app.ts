import { fastify, type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { SupervisorDeps } from './deps.js';
import { handleError } from './error-handler.js';
import { hostRootRoutes } from './routes/host-root.js';
import { statusRoutes } from './routes/status.js';

/** Request bodies are small JSON documents; archives arrive by URL, never inline. */
export const bodyLimitBytes = 64 * 1024;

/** Options for {@link buildApp} that concern the server, not the routes. */
export interface BuildAppOptions {
  serverFactory?: FastifyServerFactory;
}

/**
 * Builds the API without binding anything, so tests drive it with inject().
 * One plugin per resource; the error handler turns every error into problem+json.
 */
export async function buildApp(deps: SupervisorDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only widens the instance's logger type.
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: bodyLimitBytes,
    // The socket is local and root-only, but a stuck client must not pin a request forever.
    requestTimeout: 120_000,
    disableRequestLogging: true,
    ...(options.serverFactory === undefined ? {} : { serverFactory: options.serverFactory }),
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request, reply) =>
    handleError(Object.assign(new Error(`no route ${request.method} ${request.url}`), { statusCode: 404, code: 'NOT_FOUND', name: 'NotFound' }), request, reply),
  );
  await app.register(statusRoutes(deps));
  await app.register(hostRootRoutes(deps));
  return app;
}
