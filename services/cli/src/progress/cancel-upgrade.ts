import { exitCodes, type ApiClient, type Operation } from '@aks-flex-node/api';
import { AgentError, messageOf } from '@aks-flex-node/log';
import { printJson, printLine } from '../output.js';

/**
 * While a foreground `agent-upgrade --url` follows its operation, the first
 * Ctrl-C asks the daemon to cancel it (the same as `--cancel ID`); the
 * follower then reports the cancelled result. A second Ctrl-C, or one after
 * the switch began, ends this command the usual way. Returns the undo.
 */
export function cancelOnInterrupt(client: ApiClient, id: string): () => void {
  const onInterrupt = () => {
    process.stderr.write(`cancelling AgentUpgrade ${id} (Ctrl-C again to stop waiting)\n`);
    client.cancelOperation(id).catch((error: unknown) => {
      // Too late or already over: the follower reports what really happened.
      process.stderr.write(`could not cancel AgentUpgrade ${id}: ${messageOf(error)}\n`);
    });
  };
  process.once('SIGINT', onInterrupt);
  return () => {
    process.off('SIGINT', onInterrupt);
  };
}

/**
 * Prints a cancelled operation. Exit 0: the upgrade stopped and the host is
 * as it was. Throws UPGRADE_FAILED if the daemon reports it did not stop.
 */
export function reportCancelled(operation: Operation, json: boolean): number {
  if (operation.state !== 'failed') {
    throw new AgentError(
      'UPGRADE_FAILED',
      `AgentUpgrade ${operation.id} did not stop: it is ${operation.state}`,
      { path: operation.id, hint: 'see it with `aks-flex-node status`' },
    );
  }
  if (json) printJson(operation);
  else printLine(`AgentUpgrade ${operation.id} cancelled: ${operation.message ?? ''}`);
  return exitCodes.ok.code;
}
