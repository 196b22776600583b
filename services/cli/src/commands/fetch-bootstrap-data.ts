import { exitCodes } from '@aks-flex-node/api';
import { listBootstrapData } from '../bootstrap-data/list-bootstrap-data.js';
import type { FetchOptions } from '../bootstrap-data/fetch-options.js';
import { parseFetchFlags, takeInlineSecret } from '../bootstrap-data/parse-fetch-flags.js';
import { writeBootstrapData } from '../bootstrap-data/write-bootstrap-data.js';

/** Gets an access token for Azure Resource Manager as the options' identity. */
export type GetArmToken = (options: FetchOptions, env: NodeJS.ProcessEnv) => Promise<string>;

/** What the command reaches outside itself; tests pass their own. */
export interface FetchDeps {
  readonly env: NodeJS.ProcessEnv;
  readonly getArmToken: GetArmToken;
  readonly fetch: typeof fetch;
  /** One line of progress on stderr; never the token or the data. */
  readonly report: (line: string) => void;
}

/**
 * `aks-flex-node fetch-bootstrap-data --cluster-resource-id ID
 * --agent-pool-name NAME --auth MODE --output PATH [...]`: gets an ARM token
 * as the node's identity, calls AKS's listBootstrapData for the pool and
 * writes the join data (a short-lived bootstrap token, versions, cluster
 * settings) to PATH, mode 0600. bootstrap.sh merges it into the config. The
 * data is never printed. Exits 9 (temporary) when a service could not be
 * reached or failed for now, 12 (denied) when it refused the identity or
 * the target.
 */
export async function runFetchBootstrapData(args: string[], deps: FetchDeps): Promise<number> {
  // First of all: no error report, log line or child process may see the secret.
  const inlineSecret = takeInlineSecret(deps.env);
  const options = parseFetchFlags(args, deps.env, inlineSecret);
  const token = await deps.getArmToken(options, deps.env);
  const data = await listBootstrapData(options, token, { fetch: deps.fetch });
  await writeBootstrapData(options.output, data);
  deps.report(
    `wrote the bootstrap data of agent pool ${options.agentPoolName} to ${options.output} (mode 0600)`,
  );
  return exitCodes.ok.code;
}
