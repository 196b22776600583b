import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { holdsAnyMarker } from './holds-any-marker.js';

const markers = ['lib/aks-flex-node/aks-flex-node-current', 'lib/aks-flex-node/aks-flex-node-blue'];

async function tempRoot(): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'holds-any-marker-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  return tmp;
}

describe('holdsAnyMarker', () => {
  it('a dangling current link still holds the installation', async () => {
    const root = await tempRoot();
    await mkdir(path.join(root, 'lib/aks-flex-node'), { recursive: true });
    await symlink('aks-flex-node-green', path.join(root, markers[0]!));
    expect(await holdsAnyMarker(root, markers)).toBe(true);
  });

  it('nothing at the markers, or a file where their directory should be, is absent', async () => {
    const root = await tempRoot();
    expect(await holdsAnyMarker(root, markers)).toBe(false);
    await writeFile(path.join(root, 'lib'), 'not a directory');
    expect(await holdsAnyMarker(root, markers)).toBe(false);
  });

  it('a root that cannot be judged (a link loop) is an error, not "not held"', async () => {
    const root = await tempRoot();
    await symlink('lib', path.join(root, 'lib'));
    const attempt = holdsAnyMarker(root, markers);
    await expect(attempt).rejects.toThrow(`inspect ${path.join(root, markers[0]!)}`);
    await expect(attempt).rejects.toMatchObject({ code: 'HOST_ROOT_IO' });
  });
});
