import { exitCodes } from '@aks-flex-node/api';
import { checkInstallDir, checkMoveTarget } from '@aks-flex-node/hostroot';
import { hostPaths, hostRootMarkers } from '@aks-flex-node/layout';
import { parseCommandArgs } from '../args.js';
import { printJson, printLine } from '../output.js';

/**
 * `aks-flex-node preflight [--json]`: checks the host before an install
 * without changing anything. Exits 1 when any check is an error.
 */
export async function runPreflight(args: string[]): Promise<number> {
  const flags = parseCommandArgs('preflight', args, { json: { type: 'boolean', default: false } });
  const moveTarget = await checkMoveTarget(hostPaths, hostRootMarkers());
  const checks = [
    await checkInstallDir(hostPaths, hostRootMarkers()),
    ...(moveTarget === undefined ? [] : [moveTarget]),
  ];
  const failed = checks.some((check) => check.level === 'error');
  if (flags.json) printJson({ ok: !failed, checks });
  else {
    for (const check of checks)
      printLine(`${check.level.toUpperCase()} ${check.name}: ${check.message}`);
    printLine(failed ? 'Preflight: failed' : 'Preflight: ok');
  }
  return failed ? exitCodes.failure.code : exitCodes.ok.code;
}
