import {
  createApiClient,
  exitCodes,
  isTerminalOperationState,
  type ApiClient,
  type Operation,
} from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { printJson, printLine } from '../output.js';
import { createProgressView } from '../progress/upgrade-progress.js';

/**
 * `aks-flex-node agent-upgrade --url URL [--sha256 HEX] [--json] [--timeout SECONDS]`:
 * asks the daemon to upgrade, shows its progress, and follows it through the
 * restart into the candidate until the result is known. Exit 0 when the
 * candidate runs, 6 when the upgrade failed or was rolled back.
 */
export async function runAgentUpgrade(args: string[]): Promise<number> {
  const flags = parseCommandArgs('agent-upgrade', args, {
    url: { type: 'string' },
    sha256: { type: 'string' },
    json: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '300' },
  });
  if (flags.url === undefined) {
    throw new AgentError('INVALID_ARGUMENT', 'agent-upgrade needs --url URL of a release archive', {
      hint: 'aks-flex-node agent-upgrade --url https://…/aks-flex-node-<version>-linux-<arch>.tar.gz [--sha256 HEX]',
    });
  }
  const timeoutMs = Number(flags.timeout) * 1000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `--timeout ${flags.timeout} is not a positive number of seconds`,
    );
  }
  const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: 30_000 });
  const source =
    flags.sha256 === undefined ? { url: flags.url } : { url: flags.url, sha256: flags.sha256 };
  const operation = await client.beginAgentUpgrade({ source });
  const view = createProgressView(flags.json);
  try {
    await client.followOperation(operation.id, (event) => {
      view.show(event);
    });
  } catch (error) {
    // The stream may break as the daemon restarts; the result is read below either way.
    if (!isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
  } finally {
    view.stop();
  }
  const result = await awaitResult(client, operation.id, Date.now() + timeoutMs);
  if (flags.json) printJson(result);
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
async function awaitResult(client: ApiClient, id: string, deadline: number): Promise<Operation> {
  for (;;) {
    try {
      const operation = await client.operation(id);
      if (isTerminalOperationState(operation.state)) return operation;
    } catch (error) {
      if (!isAgentError(error, 'DAEMON_UNREACHABLE') && !isAgentError(error, 'DAEMON_ERROR'))
        throw error;
    }
    if (Date.now() > deadline) {
      throw new AgentError('UPGRADE_FAILED', `the AgentUpgrade ${id} did not finish in time`, {
        hint: `check it later with \`aks-flex-node status\`; the daemon finishes it on its own`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
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
