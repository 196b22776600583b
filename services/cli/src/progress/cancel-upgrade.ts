import { exitCodes, type ApiClient, type Operation } from '@aks-flex-node/api';
import { AgentError, isAgentError, messageOf } from '@aks-flex-node/log';
import { agentCommand } from '../agent-command.js';
import { printJson, printLine } from '../output.js';
import { stillRunning } from './await-upgrade-result.js';

/** What {@link cancelOnInterrupt} needs from the follower. */
export interface InterruptTarget {
  /** Whether the upgrade has begun to switch: past that, nothing cancels it. */
  hasSwitched(): boolean;
  /** Aborted, with the error the command ends with, when Ctrl-C can only stop the waiting. */
  abandon: AbortController;
  /** Prints a note under the progress (a live bar's line is ended first). */
  note: (line: string) => void;
}

/**
 * While a foreground `agent-upgrade --url` follows its operation, the first
 * Ctrl-C before the switch asks the daemon to cancel it (the same as
 * `--cancel ID`), and the follower reports it cancelled. After the switch
 * the upgrade goes on whatever this command does: Ctrl-C then stops the
 * waiting and says how to follow it. A second Ctrl-C ends this command the
 * usual way. Returns the undo.
 */
export function cancelOnInterrupt(
  client: ApiClient,
  id: string,
  target: InterruptTarget,
): () => void {
  const goesOn = (why = 'has switched to the new binary, so Ctrl-C no longer cancels it') => {
    target.abandon.abort(stillRunning(id, why));
  };
  const onInterrupt = () => {
    if (target.hasSwitched()) {
      goesOn();
      return;
    }
    target.note(`cancelling AgentUpgrade ${id} (Ctrl-C again to stop waiting)`);
    client.cancelOperation(id).catch((error: unknown) => {
      // Switched meanwhile: the same as a Ctrl-C after the switch.
      if (isAgentError(error, 'OPERATION_NOT_CANCELLABLE')) goesOn();
      // The daemon that ran it is gone: it exited to restart into the new
      // binary, with the switch event still on its way here (a loaded host
      // delivers the Ctrl-C first), or it crashed. No daemon can cancel it
      // now, and its next start judges it: waiting on after this Ctrl-C
      // would ignore it, for as long as the restart takes or for good.
      else if (isAgentError(error, 'DAEMON_UNREACHABLE'))
        goesOn(
          'is no longer cancellable: the daemon that ran it stopped answering, as it does to restart into the new binary after the switch',
        );
      // Otherwise the follower reports what really happened.
      else target.note(`could not cancel AgentUpgrade ${id}: ${messageOf(error)}`);
    });
  };
  process.once('SIGINT', onInterrupt);
  return () => {
    process.off('SIGINT', onInterrupt);
  };
}

/**
 * Prints a cancelled operation for `--cancel ID`. Exit 0: the cancel did what
 * was asked, the upgrade stopped and the host is as it was (the command that
 * followed the upgrade ends with the cancelled code). Throws UPGRADE_FAILED if
 * the daemon reports it did not stop.
 */
export function reportCancelled(operation: Operation, json: boolean): number {
  if (operation.state !== 'failed') {
    throw new AgentError(
      'INTERNAL',
      `AgentUpgrade ${operation.id} did not stop: it is ${operation.state}`,
      { path: operation.id, hint: `see it with \`${agentCommand(`operations ${operation.id}`)}\`` },
    );
  }
  if (json) printJson(operation);
  else printLine(`AgentUpgrade ${operation.id} cancelled: ${operation.message ?? ''}`);
  return exitCodes.ok.code;
}
