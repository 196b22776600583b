import type { FastifyInstance, FastifyPluginAsync, onRequestHookHandler } from 'fastify';
import type { SupervisorDeps } from '../deps.js';
import { agentUpgradeChangeRoutes } from './agent-upgrades.js';
import { hostRootChangeRoutes } from './host-root.js';

/**
 * The changes behind the startup gate, in one encapsulated plugin: its
 * onRequest hook runs for these routes only, so a read (a status poll above
 * all) runs no hook at all. While the daemon starts, moves its files or
 * waits to be replaced, a change is refused at once, never left waiting.
 *
 * Outside it, on purpose: recovery (it brings back a failed upgrade); reset
 * (it takes the activation lock, so it never overlaps a move in progress,
 * and then stops this daemon, which is what an operator who resets a held
 * host wants); the nspawn pre-start hook's request (the kubelet machine
 * starts right after the agent at boot and must not lose its hooks to the
 * daemon's stability interval; it too takes the activation lock, and writes
 * only hooks naming a helper it has just installed under the root as it
 * resolves then, which is right in every state the gate holds for).
 */
export function gatedRoutes(deps: SupervisorDeps): FastifyPluginAsync {
  const gate: onRequestHookHandler = (request, _reply, done) => {
    done(deps.startup.refusal(`${request.method} ${request.url}`));
  };
  return async (app: FastifyInstance) => {
    app.addHook('onRequest', gate);
    await app.register(hostRootChangeRoutes(deps));
    await app.register(agentUpgradeChangeRoutes(deps));
  };
}
