import { readFile, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mountFacts } from './mount-facts.js';
import { makeTempDir } from './test-support.js';

/** What the last mountinfo line for exactly `mountPoint` says, read independently of the parser. */
async function lastLineFor(mountPoint: string): Promise<{ noexec: boolean; fsType: string }> {
  const lines = (await readFile('/proc/self/mountinfo', 'utf8')).trim().split('\n');
  const line = lines.filter((l) => l.split(' ')[4] === mountPoint).at(-1);
  if (line === undefined) throw new Error(`no mountinfo line for ${mountPoint}`);
  const [before, after] = line.split(' - ');
  return {
    noexec: before!.split(' ')[5]!.split(',').includes('noexec'),
    fsType: after!.split(' ')[0]!,
  };
}

describe('mountFacts', () => {
  it.each(['/', '/proc'])(
    'hostroot#83 agrees with /proc/self/mountinfo for %s',
    async (mountPoint) => {
      const facts = await mountFacts(mountPoint);
      expect(facts.mountPoint).toBe(mountPoint);
      expect({ noexec: facts.noexec, fsType: facts.fsType }).toEqual(await lastLineFor(mountPoint));
    },
  );

  it('hostroot#83 a missing path is an error containing "inspect the filesystem of"', async () => {
    const missing = path.join(await makeTempDir(), 'missing');
    await expect(mountFacts(missing)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: missing,
      message: expect.stringContaining(`inspect the filesystem of ${missing}: ENOENT`) as unknown,
    });
  });

  /** A mountinfo naming mounts under `tmp`, with optional fields, escapes and a repeated mount point. */
  function fixtureMountinfo(tmp: string): string {
    return [
      '1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw',
      `2 1 8:2 / ${tmp}/usr rw,noexec shared:1 master:2 - ext4 /dev/sda2 ro,errors=remount-ro`,
      `3 1 8:3 / ${tmp}/my\\040disk ro,nosuid - xfs /dev/sdb rw`,
      `4 1 8:4 / ${tmp}/data rw - ext4 /dev/sdc rw`,
      `5 1 0:9 / ${tmp}/data rw,noexec - tmpfs tmpfs rw`,
      '',
    ].join('\n');
  }

  it.each([
    [
      'a path under a mount takes that mount; ro counts from the super options',
      'usr/bin',
      'usr',
      { readOnly: true, noexec: true, fsType: 'ext4' },
    ],
    [
      'a mount point is matched at a component boundary only',
      'usrlocal',
      '/',
      { readOnly: false, noexec: false, fsType: 'ext4' },
    ],
    [
      '\\040 in a mount point is decoded to a space',
      'my disk/x',
      'my disk',
      { readOnly: true, noexec: false, fsType: 'xfs' },
    ],
    [
      'the last of several mounts on one point wins',
      'data',
      'data',
      { readOnly: false, noexec: true, fsType: 'tmpfs' },
    ],
  ])('%s', async (_name, target, mountPoint, expected) => {
    const tmp = await realpath(await makeTempDir());
    await mkdir(path.join(tmp, target), { recursive: true });
    const facts = await mountFacts(path.join(tmp, target), { mountinfo: fixtureMountinfo(tmp) });
    expect(facts).toEqual({
      mountPoint: mountPoint === '/' ? '/' : path.join(tmp, mountPoint),
      ...expected,
    });
  });
});
