import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readOperationRecord } from '@aks-flex-node/agentbinary';
import {
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  lastGoodLinkFile,
  type HostPaths,
} from '@aks-flex-node/layout';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { resetAgent } from './reset-agent.js';
import { resetAgentUnderLock } from './reset-under-lock.js';
import {
  exists,
  fakeEffects,
  installAgent,
  installUnitsAndState,
  newHost,
  treeSnapshot,
} from './test-fixtures.js';

const log = createSilentLogger();
const now = new Date('2026-12-03T13:00:00Z');

/** The agent installed with blue last-good, green staged as the candidate, and `current` where `on` says. */
async function layUpgrade(
  paths: HostPaths,
  on: 'candidate' | 'last-good',
  signal: Record<string, unknown>,
): Promise<void> {
  await installAgent(paths.root);
  await installUnitsAndState(paths);
  const green = path.join(paths.root, greenSlotFile);
  await writeFile(green, '#!/bin/sh\necho candidate\n', { mode: 0o755 });
  const current = path.join(paths.root, currentLinkFile);
  await rm(current);
  await symlink(on === 'candidate' ? green : path.join(paths.root, blueSlotFile), current);
  await writeFile(
    paths.signalFile,
    JSON.stringify({
      operationName: 'upgrade-20261203-abcd',
      startedAt: '2026-12-03T12:59:00Z',
      sourceUrl: 'file:///var/tmp/release.tar.gz',
      previousPath: path.join(paths.root, blueSlotFile),
      candidatePath: green,
      ...signal,
    }),
  );
}

describe('a reset and an AgentUpgrade in flight (issue#28.3)', () => {
  it.each([
    ['switched, waiting for the restarted daemon to judge it', { switchCommitted: true }],
    ['switched but the commit not yet recorded (killed between the two)', {}],
    [
      'judged failed, the rollback of the files not done yet',
      { failure: 'exited 1', recoveryRequired: true },
    ],
  ])(
    'issue#28.3 candidate current, %s: refused under the lock, nothing changed, no systemctl call',
    async (_name, signal) => {
      const paths = await newHost();
      await layUpgrade(paths, 'candidate', signal);
      const before = await treeSnapshot(paths);
      const { effects, network, calls } = fakeEffects(paths);

      const error: unknown = await resetAgentUnderLock({ paths, effects, network, log }).catch(
        (e: unknown) => e,
      );

      expect(isAgentError(error, 'ACTIVATION_IN_PROGRESS')).toBe(true);
      expect(isAgentError(error) && error.message).toContain('upgrade-20261203-abcd');
      expect(isAgentError(error) && error.path).toBe(paths.signalFile);
      expect(isAgentError(error) && error.hint).toContain('recover-agent-upgrade --message');
      expect(calls).toEqual([]);
      // The lock's own files under run/ are the only ones the refusal may have made.
      const layout = (lines: string[]) => lines.filter((line) => !/^run( |\/)/.test(line));
      expect(layout(await treeSnapshot(paths))).toEqual(layout(before));
    },
  );

  it.each([
    [
      'judged failed and rolled back, the restart into last-good not run yet',
      { failure: 'the daemon started from X, not the candidate', recoveryRequired: true },
      'rolled-back',
      'the daemon started from X, not the candidate; ended by a reset',
      undefined,
    ],
    [
      // issue#24.2: to the agent-upgrade that followed it, nothing changed: cancelled (exit 10).
      'killed before the switch (current still last-good)',
      {},
      'failed',
      'interrupted before the switch; ended by a reset',
      'OPERATION_CANCELLED',
    ],
  ] as const)(
    'issue#28.3 current already judged, %s: the reset records the end before the signal goes',
    async (_name, signal, state, message, code) => {
      const paths = await newHost();
      await layUpgrade(paths, 'last-good', signal);
      const { effects, network } = fakeEffects(paths);

      const report = await resetAgent({ paths, effects, network, log, now: () => now });

      expect(report.endedUpgrade).toBe('upgrade-20261203-abcd');
      expect(await exists(paths.signalFile)).toBe(false);
      const record = await readOperationRecord(paths.operationsDir, 'upgrade-20261203-abcd');
      expect(record).toMatchObject({
        kind: 'agent-upgrade',
        state,
        phase: 'judged',
        fromPath: path.join(paths.root, blueSlotFile),
        toPath: path.join(paths.root, greenSlotFile),
        finishedAt: now.toISOString(),
      });
      expect(record?.message).toContain(message);
      expect(record?.code).toBe(code);
      // Judged means last-good: the binary a rejoin runs is the one that ran before.
      expect(await readFile(path.join(paths.root, currentLinkFile), 'utf8')).toContain(
        'echo agent',
      );
      expect(await readFile(path.join(paths.root, lastGoodLinkFile), 'utf8')).toContain(
        'echo agent',
      );

      // Idempotent: a second reset finds no signal and ends nothing.
      const again = await resetAgent({ paths, effects, network, log, now: () => now });
      expect(again.endedUpgrade).toBeUndefined();
    },
  );

  it('a signal that is not valid JSON does not stop the reset: it is removed, and no record is invented', async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths);
    await writeFile(paths.signalFile, '{garbage');
    const { effects, network } = fakeEffects(paths);

    const report = await resetAgent({ paths, effects, network, log });

    expect(report.removed).toContain(paths.signalFile);
    expect(report.endedUpgrade).toBeUndefined();
    expect(await exists(paths.operationsDir)).toBe(false);
  });
});
