import { runStatus } from '../commands/status.js';
import { runReportingErrors } from '../roles/run-reporting-errors.js';

/** The bundle's entry (BundleEntry): `status` alone, so that it loads nothing else. */
export function runBundleRole(_role: string, args: string[]): Promise<number> {
  return runReportingErrors(() => Promise.resolve(runStatus), args);
}
