import { execFileSync } from 'node:child_process';
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CandidateTrust } from '../upgrade/candidate-source.js';
import { snapshotCandidate } from './snapshot-candidate.js';

async function scratch() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'snapshot-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const source = path.join(tmp, 'aks-flex-node');
  await writeFile(source, 'original bytes', { mode: 0o755 });
  // This user's scratch directory under the shared /tmp: the rule applies from there down.
  const trust: CandidateTrust = { ownerUid: process.getuid?.() ?? 0, topDir: tmp };
  return { tmp, source, parent: path.join(tmp, 'var/lib/aks-flex-node'), trust };
}

const replacements: Record<string, (source: string) => Promise<void>> = {
  'agentbinary#94 a new file renamed over the source': async (source) => {
    await writeFile(`${source}.new`, 'replaced bytes', { mode: 0o755 });
    await rename(`${source}.new`, source);
  },
  'agentbinary#94 the source rewritten in place': (source) =>
    writeFile(source, 'replaced bytes', { mode: 0o755 }),
  'agentbinary#94 the source removed': (source) => rm(source),
};

describe('snapshotCandidate', () => {
  it.each(Object.entries(replacements))(
    '%s after the snapshot leaves the snapshot unchanged',
    async (_name, replace) => {
      const { source, parent, trust } = await scratch();
      const snapshot = await snapshotCandidate(source, parent, trust);
      await replace(source);
      expect(await readFile(snapshot.path, 'utf8')).toBe('original bytes');
      expect(snapshot.size).toBe('original bytes'.length);
      expect(path.basename(snapshot.path)).toBe('candidate');
      expect(path.basename(path.dirname(snapshot.path))).toMatch(/^host-agent-activation-/);
      // Private: only root may read or replace what is about to be installed.
      expect((await stat(path.dirname(snapshot.path))).mode & 0o777).toBe(0o700);
      expect((await stat(snapshot.path)).mode & 0o111).not.toBe(0);
      await snapshot.dispose();
      await snapshot.dispose();
      expect(await readdir(parent)).toEqual([]);
    },
  );

  const refusals: Record<string, (source: string, tmp: string) => Promise<void>> = {
    'agentbinary§3.6.2 a directory is not a candidate': async (source) => {
      await rm(source);
      await mkdir(source);
    },
    'agentbinary§3.6.2 a FIFO is refused without blocking': async (source) => {
      await rm(source);
      execFileSync('mkfifo', [source]);
    },
    'agentbinary§3.6.2 a file without an execute bit is refused': (source) => chmod(source, 0o644),
    'agentbinary§3.6.2 an empty file is refused': (source) => writeFile(source, ''),
    'agentbinary§3.6.2 a missing file is refused': (source) => rm(source),
    'issue28 a file its group can write is refused': (source) => chmod(source, 0o775),
    'issue28 a file others can write is refused': (source) => chmod(source, 0o777),
    'issue28 a file in a directory others can write, without a sticky bit, is refused': async (
      source,
    ) => {
      await mkdir(path.join(path.dirname(source), 'drop'), { mode: 0o777 });
      await chmod(path.join(path.dirname(source), 'drop'), 0o777);
      await rename(source, path.join(path.dirname(source), 'drop/aks-flex-node'));
      await symlink('drop/aks-flex-node', source);
    },
    'issue28 a link to a file others can write is refused (the file is judged)': async (source) => {
      await rename(source, `${source}.real`);
      await chmod(`${source}.real`, 0o757);
      await symlink(`${source}.real`, source);
    },
    'issue28 a group-writable directory high above the file is refused': (_source, tmp) =>
      chmod(tmp, 0o770),
  };

  it.each(Object.entries(refusals))('%s, and nothing is left behind', async (_name, make) => {
    const { tmp, source, parent, trust } = await scratch();
    await make(source, tmp);
    await expect(snapshotCandidate(source, parent, trust)).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: source,
    });
    expect(await readdir(parent).catch(() => [])).toEqual([]);
  });

  it('issue28 an untrusted candidate is refused with the reason and a root-only way to fix it', async () => {
    const { source, parent, trust } = await scratch();
    await chmod(source, 0o777);
    await expect(snapshotCandidate(source, parent, trust)).rejects.toMatchObject({
      message: `the candidate ${source} is not trusted: it is writable by others (mode 0777); it would run as root, so only root may be able to change it`,
      hint: expect.stringContaining('install -d -m 0700 /root/aks-flex-node-release') as unknown,
    });
  });

  it('issue28 a root-owned file in a sticky shared directory is accepted: no one else can rename it', async () => {
    const { tmp, source, parent, trust } = await scratch();
    const shared = path.join(tmp, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    await rename(source, path.join(shared, 'aks-flex-node'));
    const snapshot = await snapshotCandidate(path.join(shared, 'aks-flex-node'), parent, trust);
    expect(await readFile(snapshot.path, 'utf8')).toBe('original bytes');
    await snapshot.dispose();
  });

  it('issue28 a staging directory others can write is refused before anything is copied', async () => {
    const { source, parent, trust } = await scratch();
    await mkdir(parent, { recursive: true });
    await chmod(parent, 0o1777);
    await expect(snapshotCandidate(source, parent, trust)).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: parent,
      message: expect.stringContaining(`${parent} is writable by others (mode 1777)`) as unknown,
    });
    expect(await readdir(parent)).toEqual([]);
  });
});
