import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitCodes, scriptExitCodes } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';

// The install scripts cannot import the TypeScript constants, so they carry
// copies; a script that disagreed would install where the agent never looks,
// or remove a directory that is not the agent's (spec scripts 8.5).

const scriptNames = ['install.sh', 'bootstrap.sh', 'uninstall.sh'] as const;

async function readScript(name: string): Promise<string> {
  return readFile(path.join(import.meta.dirname, name), 'utf8');
}

/** Every value assigned to NAME on a line of its own, `readonly` or not. */
function assignments(source: string, name: string): string[] {
  const line = new RegExp(`^(?:readonly )?${name}=(.*)$`, 'gm');
  return [...source.matchAll(line)].map((match) => {
    const value = match[1] ?? '';
    return value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  });
}

/** The script's EXIT_* constants, by name. */
function scriptCodes(source: string): Map<string, number> {
  const codes = new Map<string, number>();
  for (const match of source.matchAll(/^readonly EXIT_([A-Z_]+)=(\d+)$/gm)) {
    codes.set(match[1] ?? '', Number(match[2]));
  }
  return codes;
}

/** `unsupportedHost` → `UNSUPPORTED_HOST`, the spelling of the scripts' constants. */
function constantName(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase();
}

describe.each(scriptNames)('scripts/%s', (name) => {
  it('spec scripts 8.5.1: assigns HOST_ROOT once, the layout root', async () => {
    expect(assignments(await readScript(name), 'HOST_ROOT')).toEqual([hostPaths.root]);
  });

  it('spec scripts 8.5.1: assigns LEGACY_ROOT once, the layout legacy root', async () => {
    expect(assignments(await readScript(name), 'LEGACY_ROOT')).toEqual([hostPaths.legacy]);
  });

  it("assigns UPGRADE_LOCK once, the Go releases' lock of the layout", async () => {
    expect(assignments(await readScript(name), 'UPGRADE_LOCK')).toEqual([hostPaths.goUpgradeLock]);
  });

  it('uses exit codes only from the scripts table, each under its own name', async () => {
    const codes = scriptCodes(await readScript(name));
    expect(codes.size).toBeGreaterThan(2);
    for (const [constant, code] of codes) {
      const entry = Object.entries(scriptExitCodes).find(([key]) => constantName(key) === constant);
      expect(entry, `EXIT_${constant} has no entry in scriptExitCodes`).toBeDefined();
      expect(code, `EXIT_${constant}`).toBe(entry?.[1].code);
    }
  });
});

/** The install logic install.sh and bootstrap.sh both carry, between its markers. */
function sharedInstallLogic(source: string): string | undefined {
  return /^# ---- begin shared install logic.*$([\s\S]*?)^# ---- end shared install logic$/m.exec(
    source,
  )?.[1];
}

describe('the install logic', () => {
  it('is the same in install.sh and bootstrap.sh, so both install alike', async () => {
    const fromInstall = sharedInstallLogic(await readScript('install.sh'));
    expect(fromInstall).toContain('install_binary()');
    expect(fromInstall).toContain('resolve_install_dir()');
    expect(sharedInstallLogic(await readScript('bootstrap.sh'))).toBe(fromInstall);
  });
});

describe('scriptExitCodes', () => {
  it('are distinct, and apart from the codes the agent exits with', () => {
    const scriptNumbers = Object.values(scriptExitCodes).map((entry) => entry.code);
    expect(new Set(scriptNumbers).size).toBe(scriptNumbers.length);
    const agentNumbers = new Set<number>(Object.values(exitCodes).map((entry) => entry.code));
    // 0 and 1 keep their usual meaning; every other script code must differ
    // from the agent's, whose status bootstrap.sh passes on from preflight and start.
    const clashes = scriptNumbers.filter((code) => code > 1 && agentNumbers.has(code));
    expect(clashes).toEqual([]);
  });

  it('docs/usage/operations.md shows exactly the table', async () => {
    const doc = await readFile(
      path.join(import.meta.dirname, '../docs/usage/operations.md'),
      'utf8',
    );
    const block =
      /<!-- script-exit-codes:begin -->\n([\s\S]*?)<!-- script-exit-codes:end -->/.exec(doc)?.[1] ??
      '';
    const rows = block
      .split('\n')
      .filter((line) => /^\| \d+ \|/.test(line))
      .map((line) =>
        line
          .split('|')
          .map((cell) => cell.trim())
          .filter(Boolean),
      );
    expect(rows).toEqual(
      Object.entries(scriptExitCodes).map(([key, entry]) => [
        String(entry.code),
        key,
        entry.permanent ? 'permanent' : 'retry',
        entry.meaning,
      ]),
    );
  });
});

describe('scripts/build.mjs', () => {
  const build = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(import.meta.dirname, 'build.mjs'), ...args], {
      encoding: 'utf8',
      timeout: 10_000,
    });

  it('issue22#7 --help prints the usage and builds nothing', () => {
    const run = build('--help');
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout).toMatch(/^usage: node scripts\/build\.mjs \[--version V\] \[--out DIR\]/);
    expect(run.stdout).toContain('--no-archive');
  });

  it('issue22#7 an unknown flag is refused with the usage and exit 2, building nothing', () => {
    const run = build('--bogus');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("Unknown option '--bogus'");
    expect(run.stderr).toContain('usage: node scripts/build.mjs');
  });
});
