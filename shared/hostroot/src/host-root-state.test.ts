import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostRootState, type HostRootState } from './host-root-state.js';
import { isHostRootInstalled } from './is-host-root-installed.js';
import { link, newLayout, touch, type Layout } from './test-fixtures.js';

const cases: [string, (l: Layout) => Promise<void>, HostRootState][] = [
  ['hostroot#36 no root is absent', () => Promise.resolve(), 'absent'],
  ['hostroot#36 a link to the legacy root is linked', (l) => link(l.root, l.legacy), 'linked'],
  [
    'hostroot#36 a link to another temp dir is other',
    async (l) => {
      await touch(path.join(l.tmp, 'data/.keep'));
      await link(l.root, path.join(l.tmp, 'data'));
    },
    'other',
  ],
  ['hostroot#36 a file is other', (l) => touch(l.root, 'stray', 0o644), 'other'],
  [
    'hostroot#36 an empty directory is installed',
    (l) => touch(path.join(l.root, 'bin/.keep')),
    'installed',
  ],
  [
    'hostroot#36 a directory with .moving is moving',
    (l) => touch(path.join(l.root, '.moving')),
    'moving',
  ],
  [
    'a link to the legacy root with a trailing slash is other',
    (l) => link(l.root, `${l.legacy}/`),
    'other',
  ],
  ['a relative link to the legacy root is other', (l) => link(l.root, '../../usr/local'), 'other'],
  ['a dangling link is other', (l) => link(l.root, path.join(l.tmp, 'missing')), 'other'],
  [
    'a dangling link named .moving still marks the move unfinished',
    (l) => link(path.join(l.root, '.moving'), path.join(l.tmp, 'missing')),
    'moving',
  ],
];

describe('hostRootState (spec hostroot §2)', () => {
  it.each(cases)('%s', async (_name, setup, expected) => {
    const l = await newLayout();
    await setup(l);
    expect(await hostRootState(l.paths)).toBe(expected);
    // 338b0b2's installed(): true for the installed case only.
    expect(await isHostRootInstalled(l.paths)).toBe(expected === 'installed');
  });

  it('a file in the root path is an inspect error, not absent', async () => {
    const l = await newLayout();
    await touch(path.join(l.tmp, 'opt/unbounded'), 'file', 0o644);
    await expect(hostRootState(l.paths)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: l.root,
      message: expect.stringContaining(`inspect ${l.root}: ENOTDIR`) as unknown,
    });
  });
});
