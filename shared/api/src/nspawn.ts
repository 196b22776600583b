import { z } from 'zod';
import { nspawnMachines, type NspawnMachine } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';
import { hostRootStateSchema } from './host-root.js';

/**
 * The machine named on a command line or in a route, checked against the
 * machines the agent provisions before anything runs for it. The message is
 * the Go releases' (spec/daemon.md 6.3).
 *
 * Throws INVALID_ARGUMENT.
 */
export function parseNspawnMachine(name: string): NspawnMachine {
  const known = nspawnMachines.find((machine) => machine === name);
  if (known !== undefined) return known;
  throw new AgentError('INVALID_ARGUMENT', `unknown nspawn machine ${JSON.stringify(name)}`, {
    path: name,
    hint: `name one of the agent's nspawn machines: ${nspawnMachines.join(', ')}`,
  });
}

/** The route's parameters; the handler checks the name with {@link parseNspawnMachine}, so the refusal says which machines exist. */
export const nspawnMachineParamsSchema = z.strictObject({ machine: z.string() });

/** `POST /v1/nspawn-machines/:machine/hooks` takes an empty object; anything else is refused. */
export const regenerateNspawnHooksRequestSchema = z.strictObject({});

/** What regenerating one machine's hooks did. */
export const regenerateNspawnHooksResponseSchema = z.strictObject({
  machine: z.enum(nspawnMachines),
  /** The host root's state before the migration the request ran first. */
  migratedFrom: hostRootStateSchema,
  /** The host root, symlinks resolved, that the hooks name the helper under. */
  root: z.string(),
  /** The lifecycle helper both hooks run. */
  helper: z.string(),
  /** Whether a hook file changed. */
  changed: z.boolean(),
  /** Whether systemd was reloaded (only when a file changed and the daemon runs under systemd). */
  reloaded: z.boolean(),
});
export type RegenerateNspawnHooksResponse = z.infer<typeof regenerateNspawnHooksResponseSchema>;
