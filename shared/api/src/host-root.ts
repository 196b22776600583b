import { z } from 'zod';

/** The states the host root can be in; one function in shared/hostroot decides which. */
export const hostRootStates = ['absent', 'linked', 'moving', 'installed', 'other'] as const;
export const hostRootStateSchema = z.enum(hostRootStates);
export type HostRootStateName = z.infer<typeof hostRootStateSchema>;

/** `GET /v1/host-root` and `aks-flex-node host-root --json`. */
export const hostRootResponseSchema = z.strictObject({
  /** The configured host root, as written. */
  path: z.string(),
  /** Where the agent's files are now, symlinks resolved. */
  resolved: z.string(),
  /** Where they would be after a migration, without changing anything. */
  planned: z.string(),
  state: hostRootStateSchema,
  /** Whether nothing the agent runs is under the legacy root any more. */
  legacyReleased: z.boolean(),
});
export type HostRootResponse = z.infer<typeof hostRootResponseSchema>;

/** `POST /v1/host-root/migrate` takes an empty object; anything else is refused. */
export const migrateRequestSchema = z.strictObject({});
export type MigrateRequest = z.infer<typeof migrateRequestSchema>;

/** The answer to a migration: the state before, and the host root after. */
export const migrateResponseSchema = z.strictObject({
  before: hostRootStateSchema,
  after: hostRootResponseSchema,
});
export type MigrateResponse = z.infer<typeof migrateResponseSchema>;
