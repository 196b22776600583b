import { afterEach, describe, expect, it } from 'vitest';
import type { ApiClient, Operation } from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';
import { cancelOnInterrupt } from './cancel-upgrade.js';

const id = 'upgrade-20261206T060000Z-1';

/** A client whose cancel ends as `cancel` says; the only call the interrupt makes. */
function clientCancelling(cancel: () => Promise<Operation>): ApiClient & { cancels: number } {
  const client = {
    cancels: 0,
    cancelOperation: () => {
      client.cancels += 1;
      return cancel();
    },
  };
  return client as unknown as ApiClient & { cancels: number };
}

let undo: (() => void) | undefined;
afterEach(() => {
  undo?.();
  undo = undefined;
});

/** Sends the process a Ctrl-C as the terminal would, and lets the cancel's promise settle. */
async function interrupt(): Promise<void> {
  process.emit('SIGINT', 'SIGINT');
  await new Promise((resolve) => setImmediate(resolve));
}

function follow(client: ApiClient, switched: boolean) {
  const abandon = new AbortController();
  const notes: string[] = [];
  undo = cancelOnInterrupt(client, id, {
    hasSwitched: () => switched,
    abandon,
    note: (line) => notes.push(line),
  });
  return { abandon, notes };
}

describe('Ctrl-C while agent-upgrade follows its operation', () => {
  it('before the switch asks the daemon to cancel, and the follower goes on to report it', async () => {
    const client = clientCancelling(() => Promise.resolve({ id } as Operation));
    const { abandon, notes } = follow(client, false);
    await interrupt();
    expect(client.cancels).toBe(1);
    expect(notes).toEqual([`cancelling AgentUpgrade ${id} (Ctrl-C again to stop waiting)`]);
    expect(abandon.signal.aborted).toBe(false);
  });

  it('after the switch stops the waiting at once, without asking the daemon', async () => {
    const client = clientCancelling(() => Promise.reject(new Error('not asked')));
    const { abandon } = follow(client, true);
    await interrupt();
    expect(client.cancels).toBe(0);
    expect(abandon.signal.aborted).toBe(true);
    expect(String(abandon.signal.reason)).toMatch(
      /has switched to the new binary, so Ctrl-C no longer cancels it/,
    );
  });

  it('with the daemon gone (restarting after a switch this command has not seen yet) stops the waiting, not ignored', async () => {
    const client = clientCancelling(() =>
      Promise.reject(
        new AgentError('DAEMON_UNREACHABLE', 'connect ENOENT /run/aks-flex-node/agent.sock'),
      ),
    );
    const { abandon } = follow(client, false);
    await interrupt();
    expect(client.cancels).toBe(1);
    expect(abandon.signal.aborted).toBe(true);
    const reason = abandon.signal.reason as AgentError;
    expect(reason.code).toBe('OPERATION_TIMED_OUT');
    expect(reason.message).toMatch(
      new RegExp(
        `^AgentUpgrade ${id} is no longer cancellable: the daemon that ran it stopped answering`,
      ),
    );
    expect(reason.hint).toBe(
      `follow it with \`/opt/unbounded/agent/bin/aks-flex-node operations ${id}\``,
    );
  });

  it('a cancel refused for another reason is noted, and the follower reports what happened', async () => {
    const client = clientCancelling(() =>
      Promise.reject(new AgentError('INTERNAL', 'the record could not be written')),
    );
    const { abandon, notes } = follow(client, false);
    await interrupt();
    expect(abandon.signal.aborted).toBe(false);
    expect(notes.at(-1)).toBe(
      `could not cancel AgentUpgrade ${id}: the record could not be written`,
    );
  });
});
