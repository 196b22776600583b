import { runNspawnLifecycle } from '@aks-flex-node/nspawn-lifecycle';
import { runReportingErrors } from '../roles/run-reporting-errors.js';

/** The bundle's entry (BundleEntry): `nspawn-lifecycle` alone, so that it loads nothing else. */
export function runBundleRole(_role: string, args: string[]): Promise<number> {
  return runReportingErrors(() => Promise.resolve(runNspawnLifecycle), args);
}
