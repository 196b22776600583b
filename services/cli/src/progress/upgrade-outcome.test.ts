import { describe, expect, it } from 'vitest';
import { exitCodeFor, exitCodes, type Operation } from '@aks-flex-node/api';
import { upgradeEndError } from './upgrade-outcome.js';

const base: Operation = {
  id: 'upgrade-1',
  kind: 'agent-upgrade',
  state: 'failed',
  phase: 'failed',
  startedAt: '2026-01-01T00:00:00.000Z',
};
const journalHint = 'journalctl -u aks-flex-node-agent';

describe('an ended AgentUpgrade exits with the code of what happened (issue#24.2)', () => {
  it.each<[string, Partial<Operation>, number, boolean]>([
    [
      'a download that failed is a fetch failure',
      { code: 'FETCH_FAILED', message: 'download …: HTTP 404', hint: 'check the URL' },
      exitCodes.fetchFailed.code,
      false,
    ],
    [
      'a wrong digest is a refusal',
      { code: 'UPGRADE_REFUSED', message: 'sha256 mismatch' },
      exitCodes.refused.code,
      false,
    ],
    [
      'a candidate that predates the host root is a refusal (docs/upgrades.md)',
      { code: 'UPGRADE_REFUSED', message: 'the candidate does not know the host root' },
      exitCodes.refused.code,
      false,
    ],
    [
      'a cancel is cancelled',
      { code: 'OPERATION_CANCELLED', message: 'AgentUpgrade upgrade-1 was cancelled on request' },
      exitCodes.cancelled.code,
      false,
    ],
    [
      'a rollback after the switch is rolled back',
      { state: 'rolled-back', switchedAt: '2026-01-01T00:00:05.000Z', message: 'exited 1' },
      exitCodes.rolledBack.code,
      true,
    ],
    [
      'a candidate judged failed after the switch is rolled back too',
      { switchedAt: '2026-01-01T00:00:05.000Z', message: 'exited 1' },
      exitCodes.rolledBack.code,
      true,
    ],
    [
      'a failure recorded without a code (an earlier release) is a failure',
      { message: 'something' },
      exitCodes.failure.code,
      false,
    ],
  ])('%s', (_name, fields, exit, candidateRan) => {
    const error = upgradeEndError({ ...base, ...fields });
    expect(error).toBeDefined();
    expect(exitCodeFor(error?.code ?? 'INTERNAL')).toBe(exit);
    // The journal is named only when a candidate actually ran.
    expect(error?.hint?.includes(journalHint)).toBe(candidateRan);
    expect(error?.message).toContain(fields.message ?? '');
  });

  it('a refusal keeps the hint it was recorded with', () => {
    const error = upgradeEndError({ ...base, code: 'FETCH_FAILED', hint: 'check the URL' });
    expect(error?.hint).toBe('check the URL');
  });

  it('a cancel says cancelled and that nothing changed, not "failed"', () => {
    const error = upgradeEndError({ ...base, code: 'OPERATION_CANCELLED', message: 'on request' });
    expect(error?.message).toBe('AgentUpgrade upgrade-1 cancelled: on request');
    expect(error?.hint).toContain('nothing changed');
  });

  it('a success is no error', () => {
    expect(upgradeEndError({ ...base, state: 'succeeded' })).toBeUndefined();
  });
});
