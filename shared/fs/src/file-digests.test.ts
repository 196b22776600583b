import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// A fresh module is a fresh daemon: nothing known but what the record holds.
async function freshDaemon(): Promise<typeof import('./file-digests.js')> {
  vi.resetModules();
  return import('./file-digests.js');
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

// Moves the clock past the window in which a just-written file's digest is
// not kept (the files here are written moments before they are read).
function laterClock(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 5_000);
}

describe('file digests by identity', () => {
  let tmp: string;
  let file: string;
  let record: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'file-digests-'));
    file = path.join(tmp, 'helper');
    record = path.join(tmp, 'run', 'file-digests.json');
    await writeFile(file, 'release one');
  });
  afterEach(async () => {
    vi.useRealTimers();
    await rm(tmp, { recursive: true, force: true });
  });

  it('hashes again once the content changed', async () => {
    const digests = await freshDaemon();
    expect(await digests.fileDigest(file)).toBe(sha256('release one'));
    await writeFile(file, 'release two');
    expect(await digests.fileDigest(file)).toBe(sha256('release two'));
  });

  it('a later daemon trusts the record while the file keeps its identity, and only then', async () => {
    laterClock();
    const first = await freshDaemon();
    await first.fileDigest(file);
    await first.saveFileDigests(record);
    // A digest the file's bytes cannot give: returned only if the record is believed.
    const stored = JSON.parse(await readFile(record, 'utf8')) as {
      digests: Record<string, { digest: string }>;
    };
    stored.digests[file]!.digest = 'a'.repeat(64);
    await writeFile(record, JSON.stringify(stored));

    const second = await freshDaemon();
    await second.restoreFileDigests(record);
    expect(await second.fileDigest(file)).toBe('a'.repeat(64));
    await writeFile(file, 'release two');
    expect(await second.fileDigest(file)).toBe(sha256('release two'));
  });

  it('keeps no digest of a file changed within a second of its read', async () => {
    const daemon = await freshDaemon();
    expect(await daemon.fileDigest(file)).toBe(sha256('release one'));
    await daemon.saveFileDigests(record);
    // Nothing was kept, so nothing was new to record.
    await expect(readFile(record, 'utf8')).rejects.toThrow(/ENOENT/);
    laterClock();
    expect(await daemon.fileDigest(file)).toBe(sha256('release one'));
    await daemon.saveFileDigests(record);
    const stored = JSON.parse(await readFile(record, 'utf8')) as {
      digests: Record<string, { digest: string }>;
    };
    expect(stored.digests[file]?.digest).toBe(sha256('release one'));
  });

  it('a missing or unreadable record means hashing', async () => {
    const daemon = await freshDaemon();
    await daemon.restoreFileDigests(record);
    await writeFile(path.join(tmp, 'garbage.json'), '{"not json');
    await daemon.restoreFileDigests(path.join(tmp, 'garbage.json'));
    await writeFile(
      path.join(tmp, 'wrong.json'),
      JSON.stringify({ digests: { [file]: { digest: 'x' } } }),
    );
    await daemon.restoreFileDigests(path.join(tmp, 'wrong.json'));
    expect(await daemon.fileDigest(file)).toBe(sha256('release one'));
  });

  it('a copy is recognised by a later daemon until either file changes', async () => {
    const copy = path.join(tmp, 'copy');
    await writeFile(copy, 'release one');
    const first = await freshDaemon();
    expect(
      await first.rememberCopy(
        { path: copy, before: await first.fileIdentity(copy) },
        { path: file, before: await first.fileIdentity(file) },
      ),
    ).toBe(true);
    await first.saveFileDigests(record);

    const second = await freshDaemon();
    expect(await second.isRecordedCopy(copy, file)).toBe(false);
    await second.restoreFileDigests(record);
    expect(await second.isRecordedCopy(copy, file)).toBe(true);
    expect(await second.isRecordedCopy(file, copy)).toBe(false);
    await writeFile(file, 'release two');
    expect(await second.isRecordedCopy(copy, file)).toBe(false);
  });

  it('no copy is recorded when the source changed meanwhile', async () => {
    const copy = path.join(tmp, 'copy');
    await writeFile(copy, 'release one');
    const daemon = await freshDaemon();
    const before = await daemon.fileIdentity(file);
    await writeFile(file, 'release two');
    expect(
      await daemon.rememberCopy(
        { path: copy, before: await daemon.fileIdentity(copy) },
        { path: file, before },
      ),
    ).toBe(false);
    expect(await daemon.isRecordedCopy(copy, file)).toBe(false);
  });
});
