import { z } from 'zod';

/**
 * A log level as this product's logger names it. The Go releases' configs
 * spell levels as logrus does, so `warning` and `panic` are accepted and any
 * case is folded.
 */
const logLevel = z
  .string()
  .trim()
  .toLowerCase()
  .transform((level) => (level === 'warning' ? 'warn' : level === 'panic' ? 'fatal' : level))
  .pipe(z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']));

/** An object whose named fields are checked and whose other fields are kept as they are. */
const section = z.looseObject;

/**
 * `/etc/aks-flex-node/config.json` as the Go install.sh and bootstrap.sh
 * render it (spec/scripts.md 3.6). Every object is loose: the Go releases,
 * which may be last-good and read the same file, own the fields this product
 * does not use, so they are kept, never refused or dropped. The fields the
 * scripts write are declared with the types they write them with; only
 * `agent.logLevel` is read by this product today.
 */
export const agentConfigSchema = section({
  agent: section({
    logLevel: logLevel.optional(),
    logDir: z.string().optional(),
    /** Set by the scripts to the lower-cased hostname when missing. */
    nodeName: z.string().optional(),
  }).optional(),
  azure: section({
    tenantId: z.string().nullable().optional(),
    resourceManagerEndpoint: z.string().optional(),
    targetAgentPoolName: z.string().optional(),
    targetCluster: section({ resourceId: z.string().optional() }).optional(),
    arc: section({ enabled: z.boolean().optional() }).optional(),
    managedIdentity: section({ clientId: z.string().optional() }).nullable().optional(),
    servicePrincipal: section({
      tenantId: z.string().nullable().optional(),
      clientId: z.string().optional(),
      clientSecret: z.string().optional(),
      clientSecretFile: z.string().optional(),
    })
      .nullable()
      .optional(),
  }).optional(),
  bootstrap: section({
    ociImage: z.string().optional(),
    offlineArtifacts: section({ source: z.string().optional() }).optional(),
  }).optional(),
  // Sections the scripts create or prune without owning their contents.
  components: section({}).optional(),
  networking: section({}).optional(),
  labels: section({}).optional(),
});
export type AgentConfig = z.infer<typeof agentConfigSchema>;

/** The config `start` writes when the host has none. */
export const defaultAgentConfig: AgentConfig = { agent: { logLevel: 'info' } };
