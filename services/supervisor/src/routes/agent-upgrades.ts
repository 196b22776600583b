import type { FastifyInstance } from 'fastify';
import {
  agentUpgradeRequestSchema,
  operationEventSchema,
  operationParamsSchema,
  operationSchema,
  recoveryRequestSchema,
  recoveryResponseSchema,
} from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';
import type { SupervisorDeps } from '../deps.js';
import { parseBody, parseParams } from '../parse-body.js';
import { endsEventStream } from '../upgrade/operation-registry.js';

function notFound(id: string): AgentError {
  return new AgentError('NOT_FOUND', `no operation ${id}`, {
    path: id,
    hint: 'operation records are kept for the last 20 operations; see `aks-flex-node status`',
  });
}

/**
 * `POST /v1/agent-upgrades` (a mutation: 202 once it holds the lock, 409 at
 * once when another runs), `GET /v1/operations/{id}`, its NDJSON event
 * stream, `DELETE /v1/operations/{id}` (cancel), and `POST /v1/recovery` for
 * the recovery shim.
 */
export function agentUpgradeRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.post('/v1/agent-upgrades', async (request, reply) => {
      const body = parseBody(agentUpgradeRequestSchema, request.body, 'POST /v1/agent-upgrades');
      const operation = await deps.upgrades.begin(body);
      return reply.status(202).send(operationSchema.parse(operation));
    });
    app.get('/v1/operations/:id', async (request) => {
      const { id } = parseParams(operationParamsSchema, request.params, 'GET /v1/operations/{id}');
      const operation = await deps.upgrades.get(id);
      if (operation === undefined) throw notFound(id);
      return operationSchema.parse(operation);
    });
    // Cancels an upgrade that has not begun to switch; answers once it stopped.
    app.delete('/v1/operations/:id', async (request) => {
      const route = 'DELETE /v1/operations/{id}';
      const { id } = parseParams(operationParamsSchema, request.params, route);
      return operationSchema.parse(await deps.upgrades.cancel(id));
    });
    app.get('/v1/operations/:id/events', async (request, reply) => {
      const route = 'GET /v1/operations/{id}/events';
      const { id } = parseParams(operationParamsSchema, request.params, route);
      // An operation another process of this daemon ran (the one before a
      // restart): a client that reconnects, or whose request waited on the
      // socket through the restart, gets its state now as a one-event stream.
      if (!deps.operations.has(id)) {
        const operation = await deps.upgrades.get(id);
        if (operation === undefined) throw notFound(id);
        const event = {
          seq: 0,
          at: new Date().toISOString(),
          phase: operation.phase,
          state: operation.state,
        };
        return reply
          .type('application/x-ndjson')
          .header('cache-control', 'no-store')
          .send(`${JSON.stringify(operationEventSchema.parse(event))}\n`);
      }
      const stream = reply.raw;
      let started = false;
      let ended = false;
      // Headers go out with the first event, so an unknown id still gets a problem+json 404.
      const unsubscribe = deps.operations.subscribe(id, (event) => {
        if (ended) return;
        if (!started) {
          started = true;
          void reply.hijack(); // this route writes the raw stream itself from here on
          stream.writeHead(200, {
            'content-type': 'application/x-ndjson',
            'cache-control': 'no-store',
          });
        }
        stream.write(`${JSON.stringify(operationEventSchema.parse(event))}\n`);
        if (endsEventStream(event)) {
          ended = true;
          // After subscribe returned, so the listener can be removed.
          setImmediate(() => {
            unsubscribe?.();
            stream.end();
          });
        }
      });
      if (unsubscribe === undefined) throw notFound(id);
      request.raw.on('close', () => {
        unsubscribe();
      });
      return reply;
    });
    app.post('/v1/recovery', async (request) => {
      const body = parseBody(recoveryRequestSchema, request.body, 'POST /v1/recovery');
      return recoveryResponseSchema.parse(await deps.upgrades.recover(body.message));
    });
    return Promise.resolve();
  };
}
