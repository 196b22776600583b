import { z } from 'zod';
import { nspawnMachines } from '@aks-flex-node/layout';
import { hostRootStateSchema } from './host-root.js';

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
