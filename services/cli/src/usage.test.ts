import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { typescriptSources } from '../../../test/support/source-files.js';
import { roleHomes } from './roles/role-homes.js';
import { asksForHelp, commandNames, topUsage, usageOf } from './usage.js';

const workspace = path.resolve(import.meta.dirname, '../../..');

/** Every non-test TypeScript source of the shared packages and services. */
async function sources(): Promise<string[]> {
  const files: string[] = [];
  for (const top of ['shared', 'services']) {
    files.push(...(await typescriptSources(path.join(workspace, top))));
  }
  return files.filter((file) => !file.endsWith('.test.ts'));
}

describe('usage', () => {
  it('every role the entry dispatches has its own usage, and every usage a role', () => {
    expect(Object.keys(roleHomes).sort()).toEqual([...commandNames].sort());
    for (const name of commandNames) expect(usageOf(name)).toMatch(/^usage: aks-flex-node /);
  });

  it('no message or hint names an aks-flex-node command that does not exist', async () => {
    const named = new Map<string, string>();
    for (const file of await sources()) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/`aks-flex-node ([a-z][a-z-]*)/g)) {
        named.set(match[1] ?? '', path.relative(workspace, file));
      }
    }
    const missing = [...named].filter(([command]) => !commandNames.includes(command));
    expect(missing).toEqual([]);
    expect(named.size).toBeGreaterThan(3);
  });

  it.each([
    [['-h'], true],
    [['--config', '/etc/x', '--help'], true],
    [['--json'], false],
  ])('asksForHelp(%j) is %s', (args, expected) => {
    expect(asksForHelp(args)).toBe(expected);
  });

  it('the top-level usage lists every documented command', () => {
    for (const name of ['version', 'status', 'host-root', 'start', 'agent-upgrade', 'agent']) {
      expect(topUsage).toContain(`  ${name}`);
    }
  });
});
