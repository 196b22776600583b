import { z } from 'zod';

/** The answer of `aks-flex-node version --json`. Extra fields are allowed: newer builds add some. */
export const versionInfoSchema = z.looseObject({
  version: z.string().min(1),
  commit: z.string(),
  arch: z.string(),
  node: z.string(),
  capabilities: z.array(z.string()),
});
export type VersionInfo = z.infer<typeof versionInfoSchema>;
