import { runToken } from '../commands/token/token.js';
import { runReportingErrors } from '../roles/run-reporting-errors.js';

/**
 * The bundle's entry (BundleEntry): the whole `token` command, which the
 * token bundle runs when the cache cannot answer. It loads @azure/identity
 * (only for Entra ID's flows) and node:crypto, which the cache hit must not pay for.
 */
export function runBundleRole(_role: string, args: string[]): Promise<number> {
  return runReportingErrors(() => Promise.resolve(runToken), args);
}
