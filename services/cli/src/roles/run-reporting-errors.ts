import { reportError } from '../output.js';
import type { LoadRole } from './run-role.js';

/**
 * Loads and runs a role and resolves with its exit code; an error becomes
 * the `error:`/`hint:` lines and the exit code from the table. Each bundle
 * calls it with its own copy of AgentError (see BundleEntry).
 */
export async function runReportingErrors(load: LoadRole, args: string[]): Promise<number> {
  try {
    const run = await load();
    return await run(args);
  } catch (error) {
    return reportError(error);
  }
}
