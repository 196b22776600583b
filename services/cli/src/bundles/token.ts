import { answerTokenFromCache } from '../commands/token/token.js';
import { runReportingErrors } from '../roles/run-reporting-errors.js';
import type { RunOtherBundle } from '../roles/run-role.js';

/**
 * The bundle's entry (BundleEntry): `token` as the kubelet meets it at
 * almost every call, a token from the cache. It holds neither
 * @azure/identity nor node:crypto (scripts/build.mjs checks), so the call
 * costs little more than Node.js's own start (bench/token-startup.sh). On a
 * miss it runs the whole command from the token-issue bundle, which reads
 * the command line again and reports its own errors (it holds its own
 * AgentError). That bundle never loads this one, so there is no cycle.
 */
export function runBundleRole(
  role: string,
  args: string[],
  runOther: RunOtherBundle,
): Promise<number> {
  return runReportingErrors(
    () =>
      Promise.resolve((argv: string[]) =>
        answerTokenFromCache(argv) ? Promise.resolve(0) : runOther('token-issue', role, argv),
      ),
    args,
  );
}
