import { describeHostRoot } from '@aks-flex-node/hostroot';
import { hostPaths } from '@aks-flex-node/layout';
import { printJson, printLine } from '../output.js';
import { runBundle } from '../roles/run-bundle.js';
import { parseHostRootFlags } from './host-root-flags.js';

/**
 * `aks-flex-node host-root [--resolved | --planned] [--json] [--migrate]`.
 * The plain form prints the planned root, one bare path on one line and
 * nothing else, as the Go releases' does (spec daemon 7.1): their install
 * scripts and upgrade guard run it to learn whether a release knows the host
 * root and compare its output with a path, so it must not change. On a
 * legacy host not yet linked the planned root differs from the resolved one
 * (`--resolved`). `--migrate` runs from a bundle of its own
 * (host-root-migrate.ts): the typed client, the lock and the logger it
 * needs would slow every plain call, which those scripts make often.
 */
export async function runHostRoot(args: string[]): Promise<number> {
  const flags = parseHostRootFlags(args);
  if (flags.migrate) return runBundle('host-root-migrate', 'host-root', args);
  const report = await describeHostRoot(hostPaths);
  if (flags.json) printJson(report);
  else printLine(flags.resolved ? report.resolved : report.planned);
  return 0;
}
