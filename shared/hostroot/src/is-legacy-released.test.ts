import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLegacyReleased } from './is-legacy-released.js';
import { link, newLayout, touch, type Layout } from './test-fixtures.js';

const cases: [string, (l: Layout) => Promise<void>, boolean][] = [
  ['hostroot#37 an absent root has not released the legacy root', () => Promise.resolve(), false],
  ['hostroot#38 a linked root has not', (l) => link(l.root, l.legacy), false],
  ['hostroot#39 a moving root has not', (l) => touch(path.join(l.root, '.moving')), false],
  ['hostroot#40 an installed (empty) root has', (l) => touch(path.join(l.root, 'bin/.keep')), true],
  [
    "hostroot#41 an operator's link to a directory outside the legacy root has",
    async (l) => {
      await touch(path.join(l.tmp, 'data/agent/.keep'));
      await link(l.root, path.join(l.tmp, 'data/agent'));
    },
    true,
  ],
  [
    "hostroot#42 an operator's link to legacy + '/' has not",
    (l) => link(l.root, `${l.legacy}/`),
    false,
  ],
  [
    "hostroot#43 an operator's link to legacy/bin has not",
    (l) => link(l.root, path.join(l.legacy, 'bin')),
    false,
  ],
  [
    'hostroot#44 a dangling link has not, and is no error',
    (l) => link(l.root, path.join(l.tmp, 'missing')),
    false,
  ],
  [
    'hostroot#45 a link to a regular file has not',
    async (l) => {
      await touch(path.join(l.tmp, 'data/file'));
      await link(l.root, path.join(l.tmp, 'data/file'));
    },
    false,
  ],
  ['hostroot#46 a regular file at the root has not', (l) => touch(l.root, 'stray', 0o644), false],
  [
    'a link to the resolved spelling of a linked legacy root has not',
    async (l) => {
      await mkdir(path.join(l.tmp, 'var'));
      await rename(l.legacy, path.join(l.tmp, 'var/usrlocal'));
      await link(l.legacy, path.join(l.tmp, 'var/usrlocal'));
      await link(l.root, path.join(l.tmp, 'var/usrlocal/bin'));
    },
    false,
  ],
];

describe('isLegacyReleased (spec hostroot §3.7)', () => {
  it.each(cases)('%s', async (_name, setup, expected) => {
    const l = await newLayout();
    await setup(l);
    expect(await isLegacyReleased(l.paths)).toBe(expected);
  });
});
