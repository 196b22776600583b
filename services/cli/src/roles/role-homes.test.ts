import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { coldRoles } from '../bundles/cold.js';
import { bundleFor, bundleNames, isRoleName, roleHomes } from './role-homes.js';

const bundlesDir = path.join(import.meta.dirname, '..', 'bundles');

describe('role homes', () => {
  it('every bundle named in the table has an entry in src/bundles, and every entry a name', async () => {
    const entries = (await readdir(bundlesDir))
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .map((file) => file.slice(0, -'.ts'.length));
    expect(entries.sort()).toEqual([...bundleNames].sort());
  });

  it('the cold bundle loads exactly the roles whose home is cold', () => {
    const cold = Object.entries(roleHomes)
      .filter(([, home]) => home === 'cold')
      .map(([name]) => name);
    expect(Object.keys(coldRoles).sort()).toEqual(cold.sort());
  });

  it('every bundle but cold holds roles the table sends to it', () => {
    const homes = new Set<string>(Object.values(roleHomes));
    for (const name of bundleNames) {
      if (name !== 'host-root-migrate' && name !== 'token-issue') expect(homes).toContain(name);
    }
  });

  it.each(['hasOwnProperty', 'constructor', '__proto__', 'toString', ''])(
    'a name inherited from Object (%j) is no role',
    (name) => {
      expect(isRoleName(name)).toBe(false);
    },
  );

  it.each([
    [['--migrate'], 'host-root-migrate'],
    [['--json', '--migrate'], 'host-root-migrate'],
    [['--json'], 'host-root'],
    [[], 'host-root'],
    [['--', '--migrate'], 'host-root'],
  ] as const)(
    'issue25#cycle host-root %j runs from the %s bundle, as the dispatcher picks',
    (args, bundle) => {
      expect(bundleFor('host-root', args)).toBe(bundle);
    },
  );

  it('every other role runs from its home, whatever its arguments', () => {
    expect(bundleFor('reset', ['--migrate'])).toBe('cold');
    expect(bundleFor('status', [])).toBe('status');
  });
});
