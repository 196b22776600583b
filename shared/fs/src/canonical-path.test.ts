import { mkdir, realpath, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalPath } from './canonical-path.js';
import { makeTempDir } from './test-support.js';

/** `<tmp>/real/unbounded` exists and `<tmp>/link` leads to `<tmp>/real`. */
async function linkedTree(): Promise<{ real: string; link: string; tmp: string }> {
  const tmp = await realpath(await makeTempDir());
  const real = path.join(tmp, 'real');
  await mkdir(path.join(real, 'unbounded'), { recursive: true });
  const link = path.join(tmp, 'link');
  await symlink(real, link);
  return { real, link, tmp };
}

describe('canonicalPath (spec hostroot §3.1)', () => {
  it.each([
    ['hostroot#1 an existing real path resolves to itself', 'real/unbounded', 'real/unbounded'],
    ['hostroot#2 a symlink resolves to its target', 'link', 'real'],
    [
      'hostroot#3 a missing tail under a symlink is appended to the target',
      'link/unbounded/bin',
      'real/unbounded/bin',
    ],
    ['hostroot#4 unclean input is cleaned', 'link/./x/', 'real/x'],
    ['a missing tail is cleaned before it is appended', 'missing//a/../b/', 'missing/b'],
  ])('%s', async (_name, input, expected) => {
    const { tmp } = await linkedTree();
    expect(await canonicalPath(`${tmp}/${input}`)).toBe(path.join(tmp, expected));
  });

  it('treats a dangling link component as missing and keeps it as written', async () => {
    const { tmp } = await linkedTree();
    await symlink(path.join(tmp, 'nowhere'), path.join(tmp, 'dangling'));
    expect(await canonicalPath(path.join(tmp, 'dangling/bin'))).toBe(
      path.join(tmp, 'dangling/bin'),
    );
  });

  it('treats a link loop as missing rather than failing', async () => {
    const { tmp } = await linkedTree();
    await symlink(path.join(tmp, 'b'), path.join(tmp, 'a'));
    await symlink(path.join(tmp, 'a'), path.join(tmp, 'b'));
    expect(await canonicalPath(path.join(tmp, 'a/x'))).toBe(path.join(tmp, 'a/x'));
  });

  it('gives the same answer before and after the tail is created', async () => {
    const { tmp, link } = await linkedTree();
    const before = await canonicalPath(path.join(link, 'agent/bin'));
    await mkdir(path.join(link, 'agent/bin'), { recursive: true });
    expect(await canonicalPath(path.join(link, 'agent/bin'))).toBe(before);
    expect(before).toBe(path.join(tmp, 'real/agent/bin'));
  });
});
