import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isActivationLockHeld } from '@aks-flex-node/lock';
import { AgentError, createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMutationQueue } from './mutation-queue.js';

async function newQueue() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mutation-queue-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const lockPath = path.join(tmp, 'run/activation.lock');
  const queue = createMutationQueue({
    lockPath,
    goLockPath: path.join(tmp, 'run/agent-upgrade.lock'),
    log: createSilentLogger(),
  });
  return { queue, lockPath };
}

describe('the mutation queue: start with an admission', () => {
  it('admits under the lock, answers with what admit returned, and hands it to the work', async () => {
    const { queue, lockPath } = await newQueue();
    const seen: string[] = [];
    let finish: () => void = () => undefined;
    const { admitted, done } = await queue.start(
      'an AgentUpgrade',
      async (operation: string) => {
        seen.push(`work ${operation}`);
        await new Promise<void>((resolve) => (finish = resolve));
        return operation;
      },
      async () => {
        seen.push(`admit, lock held: ${String(await isActivationLockHeld(lockPath))}`);
        return 'op-1';
      },
    );
    expect(admitted).toBe('op-1');
    expect(queue.isBusy()).toBe(true);
    await expect.poll(() => seen).toEqual(['admit, lock held: true', 'work op-1']);
    finish();
    expect(await done).toBe('op-1');
    expect(await isActivationLockHeld(lockPath)).toBe(false);
  });

  it('a refusal by admit comes back from start itself; the work never runs and the lock is released', async () => {
    const { queue, lockPath } = await newQueue();
    const refusal = new AgentError('ACTIVATION_IN_PROGRESS', 'an AgentUpgrade is already pending');
    let worked = false;
    await expect(
      queue.start(
        'an AgentUpgrade',
        () => {
          worked = true;
          return Promise.resolve();
        },
        () => Promise.reject(refusal),
      ),
    ).rejects.toBe(refusal);
    expect(worked).toBe(false);
    expect(queue.isBusy()).toBe(false);
    expect(await isActivationLockHeld(lockPath)).toBe(false);
  });

  it('a second mutation while one runs is refused at once, before its admit runs', async () => {
    const { queue } = await newQueue();
    let release: () => void = () => undefined;
    const first = await queue.start(
      'a reset',
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    let admitted = false;
    await expect(
      queue.start(
        'an AgentUpgrade',
        () => Promise.resolve(),
        () => {
          admitted = true;
          return Promise.resolve();
        },
      ),
    ).rejects.toMatchObject({
      code: 'ACTIVATION_IN_PROGRESS',
      // issue25: what was refused first, then what holds the lock; never "activation in progress".
      message: 'an AgentUpgrade cannot start now: a reset is running and holds the activation lock',
    });
    expect(admitted).toBe(false);
    release();
    await first.done;
  });
});
