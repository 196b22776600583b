import path from 'node:path';
import { binaryFile, currentLinkFile } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { removeLegacySeed, type SeedRemoval } from './remove-legacy-seed.js';
import { kindAt, link, log, newLayout, touch, type Layout } from './test-fixtures.js';

const seedOf = (l: Layout): string => path.join(l.legacy, binaryFile);

describe('removeLegacySeed (spec hostroot §4.9 RemoveSeed)', () => {
  it.each<[string, (l: Layout) => Promise<void>, 'missing' | 'symlink', SeedRemoval]>([
    [
      'hostroot#53 a seeded regular file is removed',
      (l) => touch(seedOf(l), 'seed'),
      'missing',
      'removed',
    ],
    [
      'hostroot#53 a symlink at the seed path is kept',
      (l) => link(seedOf(l), path.join(l.legacy, currentLinkFile)),
      'symlink',
      'absent',
    ],
    ['hostroot#53 a missing seed is success', () => Promise.resolve(), 'missing', 'absent'],
  ])('%s', async (_name, setup, expected, wasRemoved) => {
    const l = await newLayout();
    await setup(l);
    const removed = await removeLegacySeed(l.paths, log, process.execPath);
    expect(await kindAt(seedOf(l))).toBe(expected);
    // Only a plain file is removed, and only then does the caller hear so.
    expect(removed).toBe(wasRemoved);
    expect(await kindAt(path.join(l.legacy, 'bin'))).toBe('directory');
  });

  it('keeps the seed this process runs from, through any name, and removes it once another one runs', async () => {
    const l = await newLayout();
    await touch(seedOf(l), 'seed');
    // An earlier release's unit ran the seed itself, or a link to it.
    const otherName = path.join(l.tmp, 'seed-link');
    await link(otherName, seedOf(l));
    for (const running of [seedOf(l), otherName]) {
      expect(await removeLegacySeed(l.paths, log, running)).toBe('kept-running');
      expect(await kindAt(seedOf(l))).toBe('file');
    }
    // The next daemon, from the host root, is another file.
    const fromHostRoot = path.join(l.root, 'bin', binaryFile);
    await touch(fromHostRoot, 'agent');
    expect(await removeLegacySeed(l.paths, log, fromHostRoot)).toBe('removed');
    expect(await kindAt(seedOf(l))).toBe('missing');
  });

  it('reports a seed path it cannot inspect, naming it', async () => {
    const l = await newLayout();
    await touch(path.join(l.tmp, 'usr/local2'), 'file', 0o644);
    const paths = { root: l.root, legacy: path.join(l.tmp, 'usr/local2') };
    await expect(removeLegacySeed(paths, log, process.execPath)).rejects.toThrow(
      `inspect ${path.join(paths.legacy, binaryFile)}: ENOTDIR`,
    );
  });
});
