import { describeHostRoot } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';
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
  const report = await describeHostRoot(hostPaths);
  if (flags.json) printJson(report);
  else printLine(flags.resolved ? report.resolved : report.planned);
  return 0;
}
