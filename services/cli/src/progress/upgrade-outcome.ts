import type { Operation } from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';
import { agentCommand } from '../agent-command.js';

/**
 * The error an ended AgentUpgrade is reported with, or undefined when it
 * succeeded. Its code gives the exit code: a candidate that ran and failed
 * (rolled back, or judged failed after the switch) is UPGRADE_FAILED; one
 * that ended before the switch keeps the code it was recorded with
 * (UPGRADE_REFUSED, FETCH_FAILED, OPERATION_CANCELLED …). Only a candidate
 * that ran is worth its journal.
 */
export function upgradeEndError(operation: Operation): AgentError | undefined {
  const { id } = operation;
  const target = operation.toVersion === undefined ? '' : ` to ${operation.toVersion}`;
  const why = operation.message ?? 'no reason recorded';
  const record = agentCommand(`operations ${id}`);
  switch (operation.state) {
    case 'succeeded':
      return undefined;
    case 'rolled-back':
    case 'failed': {
      if (operation.state === 'rolled-back' || operation.switchedAt !== undefined) {
        const end =
          operation.state === 'rolled-back' ? 'was rolled back to the last-good binary' : 'failed';
        return new AgentError('UPGRADE_FAILED', `AgentUpgrade ${id}${target} ${end}: ${why}`, {
          path: id,
          hint: `see \`journalctl -u aks-flex-node-agent\` for why the candidate failed, and \`${record}\` for the record`,
        });
      }
      if (operation.code === 'OPERATION_CANCELLED') {
        return new AgentError('OPERATION_CANCELLED', `AgentUpgrade ${id} cancelled: ${why}`, {
          path: id,
          hint: `nothing changed; start it again with \`${agentCommand('agent-upgrade --url URL')}\` when wanted`,
        });
      }
      const end = operation.code === 'UPGRADE_REFUSED' ? 'was refused' : 'failed';
      return new AgentError(
        operation.code ?? 'INTERNAL',
        `AgentUpgrade ${id} ${end} before the switch, and nothing changed: ${why}`,
        { path: id, hint: operation.hint ?? `see \`${record}\`` },
      );
    }
    case 'running':
    case 'restarting':
      throw new Error(`AgentUpgrade ${id} is still ${operation.state}; it has no result yet`);
    default: {
      const unknown: never = operation.state;
      throw new Error(`AgentUpgrade ${id} is in an unknown state ${String(unknown)}`);
    }
  }
}

/** The line a succeeded AgentUpgrade is reported with. */
export function describeSucceeded(operation: Operation): string {
  const target = operation.toVersion === undefined ? '' : ` to ${operation.toVersion}`;
  return `AgentUpgrade ${operation.id}${target} succeeded`;
}
