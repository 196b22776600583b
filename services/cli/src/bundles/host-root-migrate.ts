import { runHostRootMigrate } from '../commands/host-root-migrate.js';
import { runReportingErrors } from '../roles/run-reporting-errors.js';

/** The bundle's entry (BundleEntry): `host-root-migrate` alone, so that it loads nothing else. */
export function runBundleRole(_role: string, args: string[]): Promise<number> {
  return runReportingErrors(() => Promise.resolve(runHostRootMigrate), args);
}
