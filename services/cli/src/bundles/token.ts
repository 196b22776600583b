import { runToken } from '../commands/token/token.js';
import { runReportingErrors } from '../roles/run-reporting-errors.js';

/**
 * The bundle's entry (BundleEntry): `token` alone. The kubelet runs it as its
 * exec credential plugin at every token refresh, so it loads nothing else;
 * @azure/identity is evaluated only on a cache miss (bench/ `token` row).
 */
export function runBundleRole(_role: string, args: string[]): Promise<number> {
  return runReportingErrors(() => Promise.resolve(runToken), args);
}
