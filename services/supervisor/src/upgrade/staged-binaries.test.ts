import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { DownloadProgress } from './archive-handler.js';
import { createStagedBinaries } from './staged-binaries.js';

async function scratch(): Promise<{ tmp: string; binary: string; slot: string }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'staged-binaries-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const binary = path.join(tmp, 'candidate');
  await writeFile(binary, 'candidate bytes', { mode: 0o700 });
  return { tmp, binary, slot: path.join(tmp, 'lib/aks-flex-node/aks-flex-node-green') };
}

describe('createStagedBinaries', () => {
  it.each([
    ['agentbinary§3.6 a relative path', 'var/lib/candidate'],
    ['agentbinary§3.6 a path that is not clean', '/var/lib/../lib/candidate'],
  ])('%s is refused when the request is parsed', (_name, binaryPath) => {
    expect(() => createStagedBinaries().parse({ binaryPath })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('agentbinary§3.6 a binary is fetched where it is and installed into the slot 0755', async () => {
    const { binary, slot } = await scratch();
    const handler = createStagedBinaries();
    const source = handler.parse({ binaryPath: binary });
    expect(source.redactedUrl).toBe(`file://${binary}`);
    const progress: DownloadProgress[] = [];
    const fetched = await handler.fetch(source, (event) => progress.push(event));
    expect(fetched.archivePath).toBe(binary);
    expect(progress).toEqual([{ receivedBytes: 15, totalBytes: 15 }]);
    await handler.install(source, fetched.archivePath, slot);
    await fetched.cleanup();
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
  ])('%s is refused when fetched', async (_name, spoil) => {
    const { binary } = await scratch();
    await spoil(binary);
    const handler = createStagedBinaries();
    await expect(
      handler.fetch(handler.parse({ binaryPath: binary }), () => undefined),
    ).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: binary,
    });
  });
});
