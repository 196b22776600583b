import { versionInfo } from '../build-info.js';
import { parseCommandArgs } from '../args.js';
import { printJson, printLine } from '../output.js';

/**
 * `aks-flex-node version [--json]`. Upgrades run every candidate with
 * `version --json` and earlier releases' units with `version`, so this stays
 * tiny: it loads none of the daemon's libraries.
 */
export function runVersion(args: string[]): Promise<number> {
  const flags = parseCommandArgs('version', args, { json: { type: 'boolean', default: false } });
  const info = versionInfo();
  if (flags.json) printJson(info);
  else
    printLine(
      `aks-flex-node ${info.version} (commit ${info.commit}, ${info.arch}, node ${info.node})`,
    );
  return Promise.resolve(0);
}
