import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAtOrUnder, isUnder } from './at-or-under.js';
import { newLayout } from './test-fixtures.js';

/** LEGACY is a link to `<tmp>/real`, as `/usr/local -> /var/usrlocal` on some images. */
async function linkedLegacy(): Promise<{ tmp: string; legacy: string; real: string }> {
  const { tmp } = await newLayout();
  const real = path.join(tmp, 'real');
  await mkdir(path.join(real, 'bin'), { recursive: true });
  const legacy = path.join(tmp, 'usr/linked-local');
  await symlink(real, legacy);
  return { tmp, legacy, real };
}

type Spelling = (t: { tmp: string; legacy: string; real: string }) => string;

describe('isUnder (spec hostroot §3.7)', () => {
  it.each<[string, Spelling, boolean]>([
    ['hostroot#52 legacy/bin/x is under', (t) => `${t.legacy}/bin/x`, true],
    ['hostroot#52 real/bin/x (the resolved spelling) is under', (t) => `${t.real}/bin/x`, true],
    ['hostroot#52 the host root is not under', (t) => `${t.tmp}/opt/unbounded/agent/bin/x`, false],
    ['hostroot#52 legacy + "other/bin/x" is not under', (t) => `${t.legacy}other/bin/x`, false],
    ['legacy itself is not strictly under', (t) => t.legacy, false],
    ['an unclean spelling is cleaned first', (t) => `${t.legacy}/./bin/../bin/x`, true],
  ])('%s', async (_name, spell, expected) => {
    const t = await linkedLegacy();
    expect(await isUnder(spell(t), t.legacy)).toBe(expected);
  });
});

describe('isAtOrUnder (spec hostroot §3.7)', () => {
  it.each<[string, Spelling, boolean]>([
    ['legacy as written is at it', (t) => t.legacy, true],
    ['legacy with a trailing slash is at it', (t) => `${t.legacy}/`, true],
    ['the resolved legacy is at it', (t) => t.real, true],
    ['something under it counts', (t) => `${t.real}/bin`, true],
    ['a sibling with the same prefix does not', (t) => `${t.legacy}other`, false],
  ])('%s', async (_name, spell, expected) => {
    const t = await linkedLegacy();
    expect(await isAtOrUnder(spell(t), t.legacy)).toBe(expected);
  });
});
