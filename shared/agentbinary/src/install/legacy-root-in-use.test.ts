import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import { legacyRootInUse } from './legacy-root-in-use.js';

describe('legacyRootInUse', () => {
  let tmp: string;
  let paths: HostPaths;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'legacy-in-use-'));
    paths = hostPathsUnder(tmp);
    await mkdir(path.join(paths.legacy, 'bin'), { recursive: true });
    await mkdir(path.join(paths.legacy, 'lib'), { recursive: true });
    await mkdir(paths.root, { recursive: true });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const atRoot = () => agentBinaryPathsUnder(paths.root);

  it('a fresh host installed under the host root: released', async () => {
    expect(await legacyRootInUse(paths, atRoot())).toBe(false);
  });

  it('a linked host runs from the legacy root: in use', async () => {
    expect(await legacyRootInUse(paths, agentBinaryPathsUnder(paths.legacy))).toBe(true);
  });

  it('blue/green files left under the legacy root (pass 2 pending): in use', async () => {
    await mkdir(path.join(paths.legacy, 'lib/aks-flex-node'));
    expect(await legacyRootInUse(paths, atRoot())).toBe(true);
  });

  it('the seed an install script left in /usr/local/bin: in use', async () => {
    await writeFile(paths.legacySeed, 'binary');
    expect(await legacyRootInUse(paths, atRoot())).toBe(true);
  });

  it('an unfinished move (marker, even as a dangling link, or staging): in use', async () => {
    await symlink('/nowhere', paths.movingMarker);
    expect(await legacyRootInUse(paths, atRoot())).toBe(true);
    await rm(paths.movingMarker);
    await mkdir(paths.staging);
    expect(await legacyRootInUse(paths, atRoot())).toBe(true);
  });
});
