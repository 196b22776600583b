import { AgentError } from '@aks-flex-node/log';
import type { OperationRegistry } from './operation-registry.js';

/** The cancel handles of the upgrades this process runs. */
export interface UpgradeCancels {
  /** A signal that cancels the operation's upgrade. */
  open(id: string): AbortSignal;
  /** The operation's background task, awaited by a cancel. */
  track(id: string, task: Promise<void>): void;
  /** The upgrade ended: a later cancel is refused. */
  close(id: string): void;
  /**
   * Cancels an upgrade that has not begun to switch, and resolves once it has
   * stopped (rolled back to the layout it found). Throws NOT_FOUND or
   * OPERATION_NOT_CANCELLABLE.
   */
  cancel(id: string): Promise<void>;
}

interface Handle {
  controller: AbortController;
  task?: Promise<void>;
}

/**
 * Builds the cancel handles. An upgrade can be cancelled while its phase is
 * before `switching`: stageAndSwitch checks the signal and enters that phase
 * in one synchronous step, so a cancel either stops it there or is refused.
 */
export function createUpgradeCancels(registry: OperationRegistry): UpgradeCancels {
  const handles = new Map<string, Handle>();
  return {
    open: (id) => {
      const controller = new AbortController();
      handles.set(id, { controller });
      return controller.signal;
    },
    track: (id, task) => {
      const handle = handles.get(id);
      if (handle !== undefined) handle.task = task;
    },
    close: (id) => {
      handles.delete(id);
    },
    cancel: async (id) => {
      const operation = registry.get(id);
      if (operation === undefined) {
        throw new AgentError('NOT_FOUND', `no running operation ${id}`, {
          path: id,
          hint: 'see the operation with `aks-flex-node operations ID`; only an upgrade this daemon runs can be cancelled',
        });
      }
      const handle = handles.get(id);
      if (
        handle === undefined ||
        operation.state !== 'running' ||
        operation.phase === 'switching'
      ) {
        throw new AgentError(
          'OPERATION_NOT_CANCELLABLE',
          `AgentUpgrade ${id} is ${operation.state} (phase ${operation.phase}) and can no longer be cancelled`,
          {
            path: id,
            hint: 'wait for it to finish; a switched upgrade that misbehaves is rolled back with `aks-flex-node recover-agent-upgrade --message TEXT`',
          },
        );
      }
      handle.controller.abort(
        new AgentError('OPERATION_CANCELLED', `AgentUpgrade ${id} was cancelled on request`, {
          path: id,
          hint: 'start it again with `aks-flex-node agent-upgrade` when wanted',
        }),
      );
      await handle.task;
    },
  };
}
