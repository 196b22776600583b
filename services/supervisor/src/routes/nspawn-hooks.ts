import type { FastifyInstance } from 'fastify';
import {
  apiRoutes,
  nspawnMachineParamsSchema,
  parseNspawnMachine,
  regenerateNspawnHooksRequestSchema,
  regenerateNspawnHooksResponseSchema,
} from '@aks-flex-node/api';
import type { SupervisorDeps } from '../deps.js';
import type { ZodTypeProvider } from './zod-type-provider.js';

/**
 * `POST /v1/nspawn-machines/:machine/hooks`, what the nspawn pre-start hook
 * asks: a mutation, so it queues behind (or is refused during) an upgrade or
 * a move. An unknown machine is refused before the queue is asked.
 */
export function nspawnHookRoutes(deps: SupervisorDeps) {
  return (app: FastifyInstance): Promise<void> => {
    app.withTypeProvider<ZodTypeProvider>().route({
      ...apiRoutes.regenerateNspawnHooks,
      schema: {
        params: nspawnMachineParamsSchema,
        body: regenerateNspawnHooksRequestSchema,
        response: { 200: regenerateNspawnHooksResponseSchema },
      },
      handler: async (request) => {
        const machine = parseNspawnMachine(request.params.machine);
        // Most machine starts find nothing to change: answered from reads,
        // without the activation lock and the flock(1) it starts.
        const unchanged = await deps.nspawnHooks.unchanged(machine);
        if (unchanged !== undefined) return unchanged;
        return deps.runMutation(`regenerating the hooks of nspawn machine ${machine}`, () =>
          deps.nspawnHooks.regenerate(machine),
        );
      },
    });
    return Promise.resolve();
  };
}
