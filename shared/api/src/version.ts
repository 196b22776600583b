import { z } from 'zod';

/**
 * Capabilities a build announces in `version --json`. `host-root` means the
 * build finds its files under the host root; an upgrade refuses a candidate
 * without it on a host whose root is a real directory.
 */
export const capabilities = ['host-root', 'api-v1'] as const;

/** The answer of `aks-flex-node version --json`. Extra fields are allowed: newer builds add some. */
export const versionInfoSchema = z.looseObject({
  version: z.string().min(1),
  commit: z.string(),
  arch: z.string(),
  node: z.string(),
  capabilities: z.array(z.string()),
});
export type VersionInfo = z.infer<typeof versionInfoSchema>;
