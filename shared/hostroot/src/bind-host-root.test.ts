import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { blueSlotFile, hostPaths, hostPathsUnder } from '@aks-flex-node/layout';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bindHostRoot, hostRoot } from './bind-host-root.js';
import { legacySeedOf } from './host-root-paths.js';
import { kindAt, log, touch } from './test-fixtures.js';

describe('bindHostRoot', () => {
  it('binds production to /opt/unbounded/agent and /usr/local', () => {
    expect(hostRoot.paths.root).toBe('/opt/unbounded/agent');
    expect(hostRoot.paths.legacy).toBe('/usr/local');
    expect(legacySeedOf(hostRoot.paths)).toBe(hostPaths.legacySeed);
  });

  it('runs migrate, prepare, state and remove against a tree built by hostPathsUnder', async () => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-bind-'));
    onTestFinished(() => rm(tmp, { recursive: true, force: true }));
    const relabeled: string[] = [];
    const relabel = (root: string): Promise<void> => {
      relabeled.push(root);
      return Promise.resolve();
    };
    const bound = bindHostRoot(hostPathsUnder(tmp), { relabel });
    await bound.migrate(log);
    await bound.prepare(log);
    expect(await bound.state()).toBe('installed');
    expect(await kindAt(path.join(bound.paths.root, path.dirname(blueSlotFile)))).toBe('directory');
    expect(relabeled).toEqual([bound.paths.root]);
    expect(await bound.isLegacyReleased()).toBe(true);
    await touch(path.join(tmp, 'usr/local/bin/aks-flex-node'), 'seed');
    await bound.removeLegacySeed(log);
    expect(await kindAt(path.join(tmp, 'usr/local/bin/aks-flex-node'))).toBe('missing');
    await bound.remove(log);
    expect(await bound.state()).toBe('absent');
  });
});
