import { mkdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileSha256 } from '@aks-flex-node/fs';
import {
  agentOnlyDirs,
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostLayoutFiles,
} from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { hostRootState } from '../host-root-state.js';
import { migrateHostRoot } from '../migrate-host-root.js';
import {
  kindAt,
  legacyHost,
  link,
  log,
  markers,
  newLayout,
  permissions,
  touch,
  type Layout,
} from '../test-fixtures.js';
import { recordDigest } from './digest-record.js';
import {
  assertRestarting,
  assertStillLinked,
  fakeMoveHost,
  finish,
  fromLegacy,
  fromRoot,
  recordBlue,
  runMove,
  withMovePaths,
  type FakeMoveHost,
  type MoveLayout,
} from './move-test-fixtures.js';
import { stageLegacyFiles } from './stage-legacy-files.js';
import { swapInCopy } from './swap-in-copy.js';

/** A linked legacy host, both slots recorded, the daemon running from the legacy root. */
async function readyHost(): Promise<{ l: MoveLayout; host: FakeMoveHost }> {
  const l = withMovePaths(await legacyHost());
  await recordBlue(l);
  return { l, host: fakeMoveHost(l, fromLegacy(l)) };
}

const at = (l: Layout, rel: string): string => path.join(l.legacy, rel);

// Every case ends with the host's artifacts in the parent untouched (legacyHost stages them).
const cases: Record<string, () => Promise<MoveLayout>> = {
  'hostroot#56 an older agent in last-good keeps the host linked, and only the running binary is recorded':
    async () => {
      const l = withMovePaths(await legacyHost());
      const host = fakeMoveHost(l, fromLegacy(l));
      const outcome = await runMove(l, host);
      expect(outcome.kind).toBe('not-ready');
      expect(outcome).toMatchObject({
        reason: expect.stringContaining('last-good binary') as unknown,
      });
      expect(outcome).toMatchObject({
        reason: expect.stringContaining('predates the host root') as unknown,
      });
      expect(host.rewrites).toHaveLength(0);
      expect(host.restarts).toBe(0);
      await assertStillLinked(l);
      const fields = (await readFile(l.move.hostRootAgentDigests, 'utf8'))
        .split(/\s+/)
        .filter(Boolean);
      expect(fields).toEqual([await fileSha256(at(l, greenSlotFile))]);
      return l;
    },
  'hostroot#57 a pending AgentUpgrade signal keeps the host linked even with both slots recorded':
    async () => {
      const { l, host } = await readyHost();
      await touch(l.move.signalFile, '{}', 0o600);
      expect(await runMove(l, host)).toEqual({
        kind: 'not-ready',
        reason: 'an AgentUpgrade has not been reported yet',
      });
      expect(host.rewrites).toHaveLength(0);
      expect(host.probes).toHaveLength(0);
      await assertStillLinked(l);
      return l;
    },
  'hostroot#58 a ready host moves in two passes: verify before the one rewrite, restart, then finish':
    async () => {
      const { l, host } = await readyHost();
      await assertRestarting(l, host, await runMove(l, host));
      expect(host.rewrites).toHaveLength(1);
      expect(host.verifies).toHaveLength(1);
      expect(host.verifies[0]!.rewritesBefore).toBe(0);
      expect(host.probes).toEqual([l.parent]);
      expect(host.relabels).toEqual([l.root]);
      await finish(l, host);
      expect(host.rewrites).toHaveLength(2);
      expect(host.verifies).toHaveLength(1);
      // A third call finds an installed root and leaves it alone.
      expect(await runMove(l, host)).toEqual({ kind: 'left-alone', state: 'installed' });
      return l;
    },
  'hostroot#60 a failed rewrite keeps every legacy file and the next run restarts': async () => {
    const { l, host } = await readyHost();
    host.rewriteError = new Error('systemd is busy');
    await expect(runMove(l, host)).rejects.toThrow('systemd is busy');
    expect(host.restarts).toBe(0);
    expect(host.rewrites[0]!.legacyCurrent).toBe('green');
    expect(await hostRootState(l.paths)).toBe('moving');
    host.rewriteError = undefined;
    await migrateHostRoot(l.paths, log, markers);
    await assertRestarting(l, host, await runMove(l, host));
    await finish(l, host);
    return l;
  },
  'hostroot#61 a refused restart keeps the marker and every legacy file; the next run restarts':
    async () => {
      const { l, host } = await readyHost();
      host.restartError = new Error('restart refused');
      await expect(runMove(l, host)).rejects.toThrow('restart refused');
      expect(await hostRootState(l.paths)).toBe('moving');
      for (const rel of hostLayoutFiles()) expect(await kindAt(at(l, rel))).not.toBe('missing');
      host.restartError = undefined;
      await assertRestarting(l, host, await runMove(l, host));
      await finish(l, host);
      return l;
    },
  'hostroot#62 listed dirs go once empty; a dir with an operator file, a link and bin stay':
    async () => {
      const { l, host } = await readyHost();
      const dirs = [
        'lib/agent',
        'lib/agent/nested',
        'libexec',
        'lib/kept',
        'lib/linked',
        'lib/missing',
      ];
      await mkdir(at(l, 'lib/agent/nested'), { recursive: true });
      await touch(at(l, 'lib/kept/operator.conf'), 'operator');
      await mkdir(path.join(l.tmp, 'elsewhere'));
      await link(at(l, 'lib/linked'), path.join(l.tmp, 'elsewhere'));
      await assertRestarting(l, host, await runMove(l, host, { dirs }));
      expect(await kindAt(at(l, 'libexec'))).toBe('directory');
      expect(await kindAt(at(l, 'lib/agent/nested'))).toBe('directory');
      host.exe = fromRoot(l);
      expect(await runMove(l, host, { dirs })).toEqual({ kind: 'moved' });
      expect(await kindAt(at(l, 'lib/agent'))).toBe('missing');
      expect(await kindAt(at(l, 'libexec'))).toBe('missing');
      expect(await readFile(at(l, 'lib/kept/operator.conf'), 'utf8')).toBe('operator');
      expect(await readlink(at(l, 'lib/linked'))).toBe(path.join(l.tmp, 'elsewhere'));
      expect(await kindAt(path.join(l.tmp, 'elsewhere'))).toBe('directory');
      expect(await kindAt(at(l, 'bin'))).toBe('directory');
      // The default dirs were not asked for, so the emptied lib/aks-flex-node stays.
      expect(await kindAt(at(l, agentOnlyDirs()[0]!))).toBe('directory');
      return l;
    },
  'hostroot#63 a move interrupted after the link was removed resumes through migrate': async () => {
    const { l, host } = await readyHost();
    await stageLegacyFiles(l.paths, hostLayoutFiles());
    await rm(l.root);
    expect(await hostRootState(l.paths)).toBe('absent');
    await migrateHostRoot(l.paths, log, markers);
    await assertRestarting(l, host, await runMove(l, host));
    expect(host.relabels).toEqual([l.root]);
    await finish(l, host);
    return l;
  },
  'hostroot#64 a move interrupted after the rename is laid out and relabelled when resumed':
    async () => {
      const { l, host } = await readyHost();
      await swapInCopy(l.paths, log, hostLayoutFiles());
      expect(await kindAt(path.join(l.root, 'lib'))).toBe('directory');
      expect(await kindAt(path.join(l.root, 'libexec'))).toBe('directory');
      await rm(path.join(l.root, 'libexec'), { recursive: true });
      await migrateHostRoot(l.paths, log, markers);
      await assertRestarting(l, host, await runMove(l, host));
      expect(host.relabels).toEqual([l.root]);
      expect(permissions((await stat(path.join(l.root, 'libexec'))).mode)).toBe(0o755);
      await finish(l, host);
      return l;
    },
  'hostroot#65 pass 2 resumes part-way through the legacy removals': async () => {
    const { l, host } = await readyHost();
    await swapInCopy(l.paths, log, hostLayoutFiles());
    await rm(at(l, blueSlotFile));
    await rm(at(l, currentLinkFile));
    host.exe = fromRoot(l);
    await migrateHostRoot(l.paths, log, markers);
    await finish(l, host);
    expect(host.verifies).toHaveLength(0);
    return l;
  },
  'hostroot#66 noexec under the parent skips the move with nothing copied': async () => {
    const { l, host } = await readyHost();
    host.noexec = true;
    const outcome = await runMove(l, host);
    expect(outcome.kind).toBe('skipped-noexec');
    expect(outcome).toMatchObject({
      reason: expect.stringContaining('healthy where it is') as unknown,
    });
    expect(outcome).toMatchObject({ reason: expect.stringContaining('mounted noexec') as unknown });
    expect(host.verifies).toHaveLength(0);
    expect(host.rewrites).toHaveLength(0);
    expect(host.relabels).toHaveLength(0);
    await assertStillLinked(l);
    expect(await kindAt(l.move.hostRootAgentDigests)).toBe('file');
    return l;
  },
  'hostroot#66 a failing noexec probe is an error and the host stays linked': async () => {
    const { l, host } = await readyHost();
    host.probeError = new Error('statfs failed');
    await expect(runMove(l, host)).rejects.toThrow('statfs failed');
    await assertStillLinked(l);
    return l;
  },
  'hostroot#66 with the probe answering exec the move goes ahead': async () => {
    const { l, host } = await readyHost();
    await assertRestarting(l, host, await runMove(l, host));
    await finish(l, host);
    return l;
  },
  'hostroot#67 a copy that cannot run is undone: units pointed back at the legacy root, then relinked':
    async () => {
      const { l, host } = await readyHost();
      host.verifyError = new Error('permission denied');
      const failure = runMove(l, host);
      await expect(failure).rejects.toThrow('permission denied');
      await expect(failure).rejects.toThrow('stays linked');
      await expect(failure).rejects.toMatchObject({ code: 'NOT_EXECUTABLE' });
      expect(host.restarts).toBe(0);
      expect(host.verifies).toHaveLength(1);
      // Deliberate difference from Go: the one rewrite names the legacy root
      // and comes before the relink, so no unit ever names a missing root.
      expect(host.rewrites).toHaveLength(1);
      expect(host.rewrites[0]!.root).toBe(l.legacy);
      await assertStillLinked(l);
      expect(await kindAt(l.move.hostRootAgentDigests)).toBe('file');
      host.verifyError = undefined;
      await assertRestarting(l, host, await runMove(l, host));
      await finish(l, host);
      return l;
    },
  'hostroot#68 the undo of a resumed move points the units back after they named the copy':
    async () => {
      const { l, host } = await readyHost();
      host.restartError = new Error('restart refused');
      await expect(runMove(l, host)).rejects.toThrow('restart refused');
      expect(host.rewrites[0]!.state).toBe('moving');
      expect(host.rewrites[0]!.root).toBe(l.root);
      host.restartError = undefined;
      host.verifyError = new Error('permission denied');
      await expect(runMove(l, host)).rejects.toThrow('permission denied');
      expect(host.verifies).toHaveLength(2);
      expect(host.rewrites).toHaveLength(2);
      expect(host.rewrites[1]!.root).toBe(l.legacy);
      await assertStillLinked(l);
      return l;
    },
  'hostroot#69 when the undo cannot rewrite the units the link is back regardless': async () => {
    const { l, host } = await readyHost();
    host.verifyError = new Error('permission denied');
    host.rewriteError = new Error('systemd is busy');
    const failure = runMove(l, host);
    await expect(failure).rejects.toThrow('permission denied');
    await expect(failure).rejects.toThrow('pointing the host back');
    await expect(failure).rejects.toThrow('systemd is busy');
    await assertStillLinked(l);
    return l;
  },
  'hostroot#71 recording first, first, second keeps two digests, mode 0600': async () => {
    const l = withMovePaths(await legacyHost());
    const first = at(l, blueSlotFile);
    const second = at(l, greenSlotFile);
    await recordDigest(l.move.hostRootAgentDigests, first);
    const written = (await stat(l.move.hostRootAgentDigests)).mtimeMs;
    await recordDigest(l.move.hostRootAgentDigests, first);
    expect((await stat(l.move.hostRootAgentDigests)).mtimeMs).toBe(written);
    await recordDigest(l.move.hostRootAgentDigests, second);
    const text = await readFile(l.move.hostRootAgentDigests, 'utf8');
    const fields = text.split(/\s+/).filter(Boolean);
    expect(fields).toHaveLength(2);
    expect(fields).toEqual([...fields].sort());
    expect(text.endsWith('\n')).toBe(true);
    expect(permissions((await stat(l.move.hostRootAgentDigests)).mode)).toBe(0o600);
    return l;
  },
};

describe('reconcileHostRootMove', () => {
  it.each(Object.entries(cases))('%s', async (_name, body) => {
    const l = await body();
    // Invariants after every row: the host's parent and artifacts are untouched.
    expect(permissions((await stat(l.parent)).mode)).toBe(0o750);
    expect(await readFile(path.join(l.parent, 'artifacts/v1.34.2/manifest.json'), 'utf8')).toBe(
      'manifest',
    );
  });
});

// hostroot#59: other hosts are left alone, and no digest is recorded for them.
const otherHosts: Record<string, (l: MoveLayout) => Promise<void>> = {
  'hostroot#59 no root': () => Promise.resolve(),
  'hostroot#59 an installed root': (l) => touch(path.join(l.root, blueSlotFile), 'blue'),
  "hostroot#59 an operator's link elsewhere": async (l) => {
    await mkdir(path.join(l.tmp, 'data/agent'), { recursive: true });
    await link(l.root, path.join(l.tmp, 'data/agent'));
  },
};

describe('reconcileHostRootMove leaves other hosts alone', () => {
  it.each(Object.entries(otherHosts))('%s', async (_name, setup) => {
    const l = withMovePaths(await newLayout());
    await setup(l);
    await touch(path.join(l.legacy, greenSlotFile), 'green');
    const before = await hostRootState(l.paths);
    const host = fakeMoveHost(l, path.join(l.legacy, greenSlotFile));
    const outcome = await runMove(l, host);
    expect(outcome).toEqual({ kind: 'left-alone', state: before });
    expect(host.rewrites).toHaveLength(0);
    expect(host.relabels).toHaveLength(0);
    expect(host.verifies).toHaveLength(0);
    expect(await kindAt(l.move.hostRootAgentDigests)).toBe('missing');
    expect(await hostRootState(l.paths)).toBe(before);
  });
});

describe('reconcileHostRootMove while moving', () => {
  it('hostroot#58 a resumed move records no digest: only a linked host reads the record', async () => {
    const { l, host } = await readyHost();
    await swapInCopy(l.paths, log, hostLayoutFiles());
    await rm(l.move.hostRootAgentDigests);
    expect(await runMove(l, host)).toEqual({ kind: 'restart-queued' });
    expect(await kindAt(l.move.hostRootAgentDigests)).toBe('missing');
  });
});
