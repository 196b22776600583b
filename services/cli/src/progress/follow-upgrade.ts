import { readOperationRecord, readUpgradeSignal } from '@aks-flex-node/agentbinary';
import { createApiClient, exitCodes, type ApiClient, type Operation } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import { printJson, printLine } from '../output.js';
import { awaitUpgradeResult, type UpgradeResultSources } from './await-upgrade-result.js';
import { createProgressView } from './upgrade-progress.js';

/**
 * Shows an AgentUpgrade's progress and follows it through the daemon's
 * restart into the candidate until the result is known, from the daemon or,
 * when none answers for it (a reset stopped the agent), from its record.
 * Returns 0 when the candidate runs, 6 when the upgrade failed, was rolled
 * back or ended without a result.
 */
export async function followUpgrade(
  client: ApiClient,
  operation: Operation,
  options: { json: boolean; timeoutMs: number; phaseNames?: Readonly<Record<string, string>> },
): Promise<number> {
  const view = createProgressView(options.json);
  try {
    await client.followOperation(operation.id, (event) => {
      // Only the human view renames phases; --json prints the API's events as they are.
      const phase = options.json ? undefined : options.phaseNames?.[event.phase];
      view.show(phase === undefined ? event : { ...event, phase });
    });
  } catch (error) {
    // The stream may break as the daemon restarts, or reach the next daemon,
    // which did not run the operation; the result is read below either way.
    if (!isAgentError(error, 'DAEMON_UNREACHABLE') && !isAgentError(error, 'NOT_FOUND'))
      throw error;
  } finally {
    view.stop();
  }
  const result = await awaitUpgradeResult(operation.id, hostResultSources, {
    timeoutMs: options.timeoutMs,
    // With --json, stdout carries only the events and the result.
    onNote: (line) => {
      if (options.json) process.stderr.write(`${line}\n`);
      else printLine(line);
    },
  });
  if (options.json) printJson(result);
  else printLine(describeResult(result));
  if (result.state === 'succeeded') return exitCodes.ok.code;
  process.stderr.write(`error: ${describeResult(result)}\n`);
  process.stderr.write(
    'hint: see `journalctl -u aks-flex-node-agent` for why the candidate failed\n',
  );
  return exitCodes.upgradeFailed.code;
}

/** The daemon over a fresh client per request (each with its own bound), and the host's files. */
const hostResultSources: UpgradeResultSources = {
  ask: (id, timeoutMs) =>
    createApiClient({ socketPath: hostPaths.socket, timeoutMs }).operation(id),
  isSignalled: async (id) => (await readUpgradeSignal(hostPaths.signalFile))?.operationName === id,
  readRecord: (id) => readOperationRecord(hostPaths.operationsDir, id),
};

function describeResult(operation: Operation): string {
  const target = operation.toVersion === undefined ? '' : ` to ${operation.toVersion}`;
  switch (operation.state) {
    case 'succeeded':
      return `AgentUpgrade ${operation.id}${target} succeeded`;
    case 'rolled-back':
      return `AgentUpgrade ${operation.id}${target} was rolled back to the last-good binary: ${operation.message ?? ''}`;
    case 'failed':
      return `AgentUpgrade ${operation.id}${target} failed: ${operation.message ?? ''}`;
    case 'running':
    case 'restarting':
      return `AgentUpgrade ${operation.id} is still ${operation.state}`;
    default: {
      const unknown: never = operation.state;
      return `AgentUpgrade ${operation.id} is in an unknown state ${String(unknown)}`;
    }
  }
}
