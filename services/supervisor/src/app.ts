import {
  LogController,
  fastify,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
} from 'fastify';
import { requestBodyLimitBytes } from '@aks-flex-node/api';
import type { SupervisorDeps } from './deps.js';
import { answerClientError } from './client-error.js';
import { handleError } from './error-handler.js';
import { operationAndRecoveryRoutes } from './routes/operation-and-recovery.js';
import { gatedRoutes } from './routes/gated-routes.js';
import { hostRootRoutes } from './routes/host-root.js';
import { nspawnHookRoutes } from './routes/nspawn-hooks.js';
import { operationEventRoutes } from './routes/operation-events.js';
import { resetRoutes } from './routes/reset.js';
import { statusRoutes } from './routes/status.js';
import { zodSerializerCompiler, zodValidatorCompiler } from './routes/zod-type-provider.js';

/** The fastify options that decide how the daemon's shutdown treats requests. */
export const shutdownServerOptions = { return503OnClosing: false } as const;

/**
 * Builds the API without binding anything, so tests drive it with inject().
 * One plugin per resource, each route carrying its schemas; the changes the
 * startup gate guards in one encapsulated plugin of their own
 * (routes/gated-routes.ts); the error handler turns every error into
 * problem+json.
 */
export async function buildApp(deps: SupervisorDeps): Promise<FastifyInstance> {
  // Typed as fastify's base logger so the instance is a plain FastifyInstance.
  const loggerInstance: FastifyBaseLogger = deps.log;
  const app = fastify({
    loggerInstance,
    bodyLimit: requestBodyLimitBytes,
    // The socket is local and root-only, but a stuck client must not pin a request forever.
    requestTimeout: 120_000,
    // A request on a connection accepted before the shutdown is answered, not
    // refused with 503: the daemon's state is good until it exits, and the
    // next daemon is not there to take the retry for a second or two.
    // Fastify still sends `Connection: close` with it.
    ...shutdownServerOptions,
    // Status polls would flood the journal; refusals and failures are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // Errors raised before routing (a bad URL, an over-long id) and before
    // fastify (oversized headers, a timeout) answer problem+json like the rest.
    frameworkErrors: (error, request, reply) => {
      // Fastify sends what the handler returns; the promise settles with the reply.
      void handleError(error, request, reply);
    },
    clientErrorHandler: (error, socket) => {
      answerClientError(error, socket, deps.log);
    },
    // Without factories of its own, fastify loads its default compilers (ajv,
    // fast-json-stringify with ajv-formats: about a hundred modules, some
    // 30 ms of CPU, 5% of a daemon's start) only to have the zod ones set
    // below replace them. No route uses them: they are never built.
    schemaController: {
      compilersFactory: {
        buildValidator: noDefaultCompiler,
        buildSerializer: noDefaultCompiler,
      },
    },
  });
  // Each route declares its body, params and responses as zod schemas.
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request, reply) =>
    handleError(
      // An unknown change is refused by a shut gate as a known one is, before it is not found.
      (isReadMethod(request.method)
        ? undefined
        : deps.startup.refusal(`${request.method} ${request.url}`)) ??
        Object.assign(new Error(`no route ${request.method} ${request.url}`), {
          statusCode: 404,
          code: 'NOT_FOUND',
          name: 'NotFound',
        }),
      request,
      reply,
    ),
  );
  await app.register(statusRoutes(deps));
  await app.register(hostRootRoutes(deps));
  await app.register(operationAndRecoveryRoutes(deps));
  await app.register(operationEventRoutes(deps));
  await app.register(resetRoutes(deps));
  await app.register(nspawnHookRoutes(deps));
  await app.register(gatedRoutes(deps));
  return app;
}

function isReadMethod(method: FastifyRequest['method']): boolean {
  return method === 'GET' || method === 'HEAD';
}

/**
 * Stands in for fastify's default compilers. The zod compilers set at the
 * root are what every plugin inherits; fastify would build a default only
 * for a schema added with addSchema, which the daemon never does.
 */
function noDefaultCompiler(): never {
  throw new Error(
    'fastify asked for its default schema compiler; every schema here is zod, set with setValidatorCompiler and setSerializerCompiler',
  );
}
