import { rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { currentLinkFile } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { legacyHost } from '../test-fixtures.js';
import { recordDigest } from './digest-record.js';
import { fromLegacy, recordBlue, withMovePaths, type MoveLayout } from './move-test-fixtures.js';
import { checkMoveReadiness, type MoveReadiness } from './move-readiness.js';

/** A linked host whose daemon (green) and last-good (blue) are both recorded. */
async function recordedHost(): Promise<MoveLayout> {
  const l = withMovePaths(await legacyHost());
  await recordBlue(l);
  await recordDigest(l.move.hostRootAgentDigests, fromLegacy(l));
  return l;
}

const cases: Record<string, [(l: MoveLayout) => Promise<void>, MoveReadiness]> = {
  'hostroot#58 both slots recorded and no signal: ready': [
    () => Promise.resolve(),
    { ready: true },
  ],
  'hostroot#57 a pending signal: not ready, whatever is recorded': [
    (l) => writeFile(l.move.signalFile, '{}'),
    { ready: false, reason: 'an AgentUpgrade has not been reported yet' },
  ],
  'hostroot#57 a dangling link at the signal path is no pending upgrade': [
    (l) => symlink(path.join(l.tmp, 'missing'), l.move.signalFile),
    { ready: true },
  ],
  'hostroot#56 a current link that does not resolve: not ready, and no error': [
    async (l) => {
      await rm(path.join(l.legacy, currentLinkFile));
      await symlink(path.join(l.legacy, 'missing'), path.join(l.legacy, currentLinkFile));
    },
    { ready: false, reason: 'the current binary does not resolve: ' },
  ],
  'hostroot#56 an empty record: the current binary predates the host root': [
    (l) => writeFile(l.move.hostRootAgentDigests, ''),
    { ready: false, reason: 'predates the host root; the move follows the next AgentUpgrade' },
  ],
};

describe('checkMoveReadiness', () => {
  it.each(Object.entries(cases))('%s', async (_name, [setup, want]) => {
    const l = await recordedHost();
    await setup(l);
    const got = await checkMoveReadiness(l.move);
    if (want.ready) {
      expect(got).toEqual(want);
    } else {
      // The reason carries the system error or the binary's path: a prefix or a fragment is compared.
      expect(got.ready ? '' : got.reason).toContain(want.reason);
    }
  });

  it('hostroot#57 a signal path under a file cannot be inspected: an error naming it', async () => {
    const l = await recordedHost();
    const move = { ...l.move, signalFile: path.join(l.move.hostRootAgentDigests, 'signal') };
    await expect(checkMoveReadiness(move)).rejects.toThrow(`inspect ${move.signalFile}`);
  });
});
