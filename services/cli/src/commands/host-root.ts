import { describeHostRoot, plannedHostRoot, resolveHostRoot } from '@aks-flex-node/hostroot';
import { hostPaths, hostRootMarkers } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';
import { printJson, printLine } from '../output.js';
import { parseHostRootFlags } from './host-root-flags.js';

/**
 * `aks-flex-node host-root [--resolved | --planned] [--json] [--migrate]`.
 * The plain form prints the planned root, one bare path on one line and
 * nothing else, as the Go releases' does (spec daemon 7.1): their install
 * scripts and upgrade guard run it to learn whether a release knows the host
 * root and compare its output with a path, so it must not change. On a
 * legacy host not yet linked the planned root differs from the resolved one
 * (`--resolved`). `--migrate` runs from a bundle of its own
 * (host-root-migrate.ts), which the dispatcher picks (`bundleFor`).
 *
 * Throws INTERNAL when given `--migrate`: only a dispatcher that lost that
 * rule sends it here.
 */
export async function runHostRoot(args: string[]): Promise<number> {
  const flags = parseHostRootFlags(args);
  if (flags.migrate) {
    throw new AgentError('INTERNAL', 'host-root --migrate reached the bundle of plain host-root', {
      hint: 'rebuild the executable with `node scripts/build.mjs`; the dispatcher sends --migrate to its own bundle',
    });
  }
  // Only what is printed is looked at: the plain form, which the Go
  // releases' scripts run often, needs the planned root alone, not the
  // state and the legacy check that --json reports (bench/startup.sh).
  if (flags.json) printJson(await describeHostRoot(hostPaths));
  else if (flags.resolved) printLine(await resolveHostRoot(hostPaths));
  else printLine(await plannedHostRoot(hostPaths, hostRootMarkers()));
  return 0;
}
