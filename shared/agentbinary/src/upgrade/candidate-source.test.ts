import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DownloadProgress } from '@aks-flex-node/archive';
import type { AgentUpgradeRequest } from '@aks-flex-node/api';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createCandidateFetcher,
  parseUpgradeSource,
  precheckUpgradeSource,
} from './candidate-source.js';

async function scratch() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'candidate-source-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const binary = path.join(tmp, 'candidate');
  await writeFile(binary, 'candidate bytes', { mode: 0o700 });
  // This user's scratch directory under the shared /tmp: trusted from there down.
  const trust = { ownerUid: process.getuid?.() ?? 0, topDir: tmp };
  return { tmp, binary, slot: path.join(tmp, 'lib/aks-flex-node/aks-flex-node-green'), trust };
}

/** A fetch's events, recorded. */
function recordedEvents() {
  const seen: { progress: DownloadProgress[]; extracting: number } = {
    progress: [],
    extracting: 0,
  };
  return {
    seen,
    events: {
      onProgress: (event: DownloadProgress) => seen.progress.push(event),
      onExtracting: () => {
        seen.extracting += 1;
      },
    },
  };
}

describe('parseUpgradeSource', () => {
  it.each<[string, AgentUpgradeRequest['source'], string]>([
    [
      'agentbinary§3.3 a URL is a release archive',
      { url: 'https://r.example/a.tar.gz?sig=secret' },
      'archive',
    ],
    ['agentbinary§3.6 a binary path is a binary on the host', { binaryPath: '/c' }, 'binary'],
  ])('%s', (_name, request, kind) => {
    const source = parseUpgradeSource(request);
    expect(source.kind).toBe(kind);
    expect(source.redactedUrl).not.toContain('secret');
  });

  it.each([
    ['agentbinary§3.6 a relative path', 'var/lib/candidate'],
    ['agentbinary§3.6 a path that is not clean', '/var/lib/../lib/candidate'],
  ])('%s is refused when the request is parsed', (_name, binaryPath) => {
    expect(() => parseUpgradeSource({ binaryPath })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('createCandidateFetcher: a binary on the host', () => {
  it('agentbinary§3.6 a binary is fetched where it is and installed into the slot 0755', async () => {
    const { tmp, binary, slot, trust } = await scratch();
    const source = parseUpgradeSource({ binaryPath: binary });
    expect(source.redactedUrl).toBe(`file://${binary}`);
    const { seen, events } = recordedEvents();
    await mkdir(path.dirname(slot), { recursive: true });
    await createCandidateFetcher(path.join(tmp, 'downloads'), trust)(source, slot, events);
    expect(seen).toEqual({ progress: [{ receivedBytes: 15, totalBytes: 15 }], extracting: 1 });
    expect(await readFile(slot, 'utf8')).toBe('candidate bytes');
    expect((await stat(slot)).mode & 0o777).toBe(0o755);
    // The caller's snapshot is the caller's to remove.
    expect(await readFile(binary, 'utf8')).toBe('candidate bytes');
  });

  it.each([
    ['agentbinary§3.6.2 a file without an execute bit', (file: string) => chmod(file, 0o600)],
    [
      'agentbinary§3.6.2 a directory',
      async (file: string) => {
        await rm(file);
        await mkdir(file);
      },
    ],
    ['agentbinary§3.6.2 a missing file', (file: string) => rm(file)],
    ['issue28 a file others can write', (file: string) => chmod(file, 0o757)],
    [
      'issue28 a file in a directory others can write (no sticky bit)',
      (_file: string, tmp: string) => chmod(tmp, 0o777),
    ],
  ])('%s is refused at the door and when fetched', async (_name, spoil) => {
    const { tmp, binary, slot, trust } = await scratch();
    await spoil(binary, tmp);
    const source = parseUpgradeSource({ binaryPath: binary });
    const refusal = { code: 'UPGRADE_REFUSED', path: binary };
    await expect(precheckUpgradeSource(source, trust)).rejects.toMatchObject(refusal);
    const { events } = recordedEvents();
    await expect(
      createCandidateFetcher(path.join(tmp, 'downloads'), trust)(source, slot, events),
    ).rejects.toMatchObject(refusal);
    await expect(stat(slot)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
