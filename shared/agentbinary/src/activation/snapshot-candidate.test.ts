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
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { snapshotCandidate } from './snapshot-candidate.js';

async function scratch(): Promise<{ source: string; parent: string }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'snapshot-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const source = path.join(tmp, 'aks-flex-node');
  await writeFile(source, 'original bytes', { mode: 0o755 });
  return { source, parent: path.join(tmp, 'var/lib/aks-flex-node') };
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
      const { source, parent } = await scratch();
      const snapshot = await snapshotCandidate(source, parent);
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

  const refusals: Record<string, (source: string) => Promise<void>> = {
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
  };

  it.each(Object.entries(refusals))('%s, and nothing is left behind', async (_name, make) => {
    const { source, parent } = await scratch();
    await make(source);
    await expect(snapshotCandidate(source, parent)).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: source,
    });
    expect(await readdir(parent).catch(() => [])).toEqual([]);
  });
});
