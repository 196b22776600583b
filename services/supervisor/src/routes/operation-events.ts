import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  apiRoutes,
  operationEventSchema,
  operationParamsSchema,
  type OperationEvent,
} from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import { endsEventStream } from '../upgrade/operation-registry.js';
import { operationNotFound } from './operation-not-found.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

const ndjsonHeaders = { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' };

/** One event as a line of the stream, checked against the schema the client parses with. */
function ndjsonLine(event: OperationEvent): string {
  return `${JSON.stringify(operationEventSchema.parse(event))}\n`;
}

/**
 * `GET /v1/operations/{id}/events`: an operation's progress as an NDJSON
 * stream, one event a line, ended by the daemon at a terminal state or a
 * restart.
 */
export function operationEventRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.operationEvents,
      schema: { params: operationParamsSchema },
      handler: async (request, reply) => {
        const { id } = request.params;
        // An operation another process of this daemon ran (the one before a
        // restart): a client that reconnects, or whose request waited on the
        // socket through the restart, gets its state now as a one-event stream.
        if (!deps.operations.has(id)) {
          const operation = await deps.upgrades.get(id);
          if (operation === undefined) throw operationNotFound(id);
          const event = {
            seq: 0,
            at: new Date().toISOString(),
            phase: operation.phase,
            state: operation.state,
          };
          return reply.headers(ndjsonHeaders).send(ndjsonLine(event));
        }
        return streamEvents(deps, id, request.raw, reply);
      },
    });
    return Promise.resolve();
  };
}

/** Follows a live operation: each event as it happens, until one ends the stream. */
function streamEvents(
  deps: SupervisorDeps,
  id: string,
  incoming: NodeJS.EventEmitter,
  reply: FastifyReply,
): FastifyReply {
  const stream = reply.raw;
  let started = false;
  let ended = false;
  // Headers go out with the first event, so an unknown id still gets a problem+json 404.
  const unsubscribe = deps.operations.subscribe(id, (event) => {
    if (ended) return;
    if (!started) {
      started = true;
      void reply.hijack(); // this route writes the raw stream itself from here on
      stream.writeHead(200, ndjsonHeaders);
    }
    stream.write(ndjsonLine(event));
    if (endsEventStream(event)) {
      ended = true;
      // After subscribe returned, so the listener can be removed.
      setImmediate(() => {
        unsubscribe?.();
        stream.end();
      });
    }
  });
  if (unsubscribe === undefined) throw operationNotFound(id);
  incoming.on('close', () => {
    unsubscribe();
  });
  return reply;
}
