import { exitCodes } from '@aks-flex-node/api';
import { checkInstallDir, checkMoveTarget } from '@aks-flex-node/hostroot';
import { hostPaths, hostRootMarkers } from '@aks-flex-node/layout';
import { readAgentConfig } from '@aks-flex-node/config';
import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { printJson, printLine } from '../output.js';

/**
 * `aks-flex-node preflight [--config PATH] [--output text|json] [--json]`:
 * checks the host before an install without changing anything. Exits 1 when
 * any check is an error. `--config` and `--output` are how bootstrap.sh (ours
 * and the Go releases') calls it; the config, when named, must read and parse.
 */
export async function runPreflight(args: string[]): Promise<number> {
  const flags = parseCommandArgs('preflight', args, {
    json: { type: 'boolean', default: false },
    config: { type: 'string' },
    output: { type: 'string', default: 'text' },
  });
  if (flags.output !== 'text' && flags.output !== 'json') {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `preflight: --output ${flags.output} is not text or json`,
      {
        hint: 'use `--output text` or `--output json`',
      },
    );
  }
  // Throws INVALID_CONFIG naming the file and what to fix, before any host check.
  if (flags.config !== undefined) await readAgentConfig(flags.config);
  const asJson = flags.json || flags.output === 'json';
  const moveTarget = await checkMoveTarget(hostPaths, hostRootMarkers());
  const checks = [
    await checkInstallDir(hostPaths, hostRootMarkers()),
    ...(moveTarget === undefined ? [] : [moveTarget]),
  ];
  const failed = checks.some((check) => check.level === 'error');
  if (asJson) printJson({ ok: !failed, checks });
  else {
    for (const check of checks)
      printLine(`${check.level.toUpperCase()} ${check.name}: ${check.message}`);
    printLine(failed ? 'Preflight: failed' : 'Preflight: ok');
  }
  return failed ? exitCodes.failure.code : exitCodes.ok.code;
}
