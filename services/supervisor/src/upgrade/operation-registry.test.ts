import { describe, expect, it } from 'vitest';
import type { Operation } from '@aks-flex-node/api';
import { createOperationRegistry } from './operation-registry.js';

const record: Operation = {
  id: 'upgrade-earlier',
  kind: 'agent-upgrade',
  state: 'succeeded',
  phase: 'judged',
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:01:00.000Z',
};

describe('what status shows of the operations (issue#24.3)', () => {
  it('the running one with its phase and progress; the last finished one with its result', () => {
    const registry = createOperationRegistry();
    expect(registry.running()).toBeUndefined();
    expect(registry.lastFinished()).toBeUndefined();

    // At start: the newest record on disk is the last one.
    registry.remember(record);
    expect(registry.lastFinished()).toEqual(record);

    const { id } = registry.create('https://example/aks-flex-node-linux-amd64.tar.gz');
    registry.update(id, { phase: 'downloading', receivedBytes: 1024, totalBytes: 4096 });
    expect(registry.running()).toMatchObject({
      id,
      state: 'running',
      phase: 'downloading',
      receivedBytes: 1024,
      totalBytes: 4096,
    });
    expect(registry.lastFinished()?.id).toBe(record.id);

    registry.update(id, {
      state: 'failed',
      phase: 'failed',
      message: 'refused',
      fields: { code: 'UPGRADE_REFUSED', hint: 'check the digest' },
    });
    expect(registry.running()).toBeUndefined();
    // One that ended here is newer than any record the start found.
    expect(registry.lastFinished()).toMatchObject({ id, code: 'UPGRADE_REFUSED' });
  });

  it('a restarting upgrade is still running', () => {
    const registry = createOperationRegistry();
    const { id } = registry.create(undefined);
    registry.update(id, { state: 'restarting', phase: 'restarting' });
    expect(registry.running()?.id).toBe(id);
  });
});
