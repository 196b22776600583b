import {
  exitCodes,
  isTerminalOperationState,
  type ApiClient,
  type Operation,
} from '@aks-flex-node/api';
import { pollUntil } from '@aks-flex-node/lock';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { printJson, printLine } from '../output.js';
import { createProgressView } from './upgrade-progress.js';

/**
 * Shows an AgentUpgrade's progress and follows it through the daemon's
 * restart into the candidate until the result is known. Returns 0 when the
 * candidate runs, 6 when the upgrade failed or was rolled back.
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
  const result = await awaitResult(client, operation.id, options.timeoutMs);
  if (options.json) printJson(result);
  else printLine(describeResult(result));
  if (result.state === 'succeeded') return exitCodes.ok.code;
  process.stderr.write(`error: ${describeResult(result)}\n`);
  process.stderr.write(
    'hint: see `journalctl -u aks-flex-node-agent` for why the candidate failed\n',
  );
  return exitCodes.upgradeFailed.code;
}

/**
 * Polls the operation until it ends. The daemon restarts meanwhile, so for a
 * while nothing answers (or connections wait on the socket); that is expected.
 */
async function awaitResult(client: ApiClient, id: string, timeoutMs: number): Promise<Operation> {
  return pollUntil(
    async () => {
      try {
        const operation = await client.operation(id);
        return isTerminalOperationState(operation.state) ? operation : undefined;
      } catch (error) {
        if (!isAgentError(error, 'DAEMON_UNREACHABLE') && !isAgentError(error, 'DAEMON_ERROR'))
          throw error;
        return undefined;
      }
    },
    {
      timeoutMs,
      intervalMs: 500,
      timedOut: () => {
        throw new AgentError('UPGRADE_FAILED', `the AgentUpgrade ${id} did not finish in time`, {
          hint: `check it later with \`aks-flex-node status\`; the daemon finishes it on its own`,
        });
      },
    },
  );
}

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
