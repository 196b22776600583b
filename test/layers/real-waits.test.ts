import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { unitConfig } from '../../vitest.config.js';
import { codeOnly, findRealWaits, realWaitsIn, type RealWaitRule } from './real-waits.js';

const workspace = path.resolve(import.meta.dirname, '../..');
const include = unitConfig.test?.include ?? [];

/**
 * The real waits a unit test may keep, each with why no event or fake clock
 * can stand in for it. Keep it short: a new entry needs a reason as good.
 */
const allowed: readonly { file: string; rule: RealWaitRule; reason: string }[] = [
  {
    file: 'shared/archive/src/open-remote-archive.test.ts',
    rule: 'real timer',
    reason:
      'a server that trickles bytes more slowly than the stall limit in all but each gap: ' +
      "the stall watchdog under test watches a real fetch (undici's own timers), so the gaps are real time",
  },
];

describe('no real sleeps or timed asserts in unit tests (issue 25)', () => {
  it('no unit test file sleeps, runs a real timer or takes a wall-clock stamp, beyond the allow-list', async () => {
    const found = await findRealWaits(workspace, include);
    const unexplained = found.filter(
      (wait) => !allowed.some((entry) => entry.file === wait.file && entry.rule === wait.rule),
    );
    expect(unexplained.map((wait) => `${wait.file}:${String(wait.line)}: ${wait.rule}`)).toEqual(
      [],
    );
    // An entry nothing needs any more is removed, so the list stays the reasons that hold.
    const unused = allowed.filter(
      (entry) => !found.some((wait) => wait.file === entry.file && wait.rule === entry.rule),
    );
    expect(unused).toEqual([]);
  });

  it.each<[string, string, RealWaitRule]>([
    ['a sleep', 'await new Promise((resolve) => setTimeout(resolve, 50));', 'real timer'],
    ['a delayed abort', 'setTimeout(() => {\n  stop.abort();\n}, 100);', 'real timer'],
    ['a polling interval', 'const timer = setInterval(poll, 20);', 'real timer'],
    [
      "node:timers/promises' sleep",
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'real sleep',
    ],
    ['a blocking wait', 'Atomics.wait(view, 0, 0, 100);', 'real sleep'],
    [
      'a duration assert',
      'const started = Date.now();\nawait take();\nexpect(Date.now() - started).toBeLessThan(1_000);',
      'wall-clock stamp',
    ],
    [
      'a measured rate',
      'const started = performance.now();\nawait download();\nconst seconds = (performance.now() - started) / 1000;',
      'wall-clock stamp',
    ],
    [
      'a time-bounded loop',
      'const deadline = Date.now() + 5_000;\nwhile (Date.now() < deadline) await poll();',
      'wall-clock stamp',
    ],
  ])('fails on %s', (_name, source, rule) => {
    expect(realWaitsIn('shared/x/src/x.test.ts', source)).toEqual([
      { file: 'shared/x/src/x.test.ts', line: 1, rule },
    ]);
    // Named in a comment, or in a child's script or a string, it is no wait of the test's.
    expect(realWaitsIn('shared/x/src/x.test.ts', `// ${source.replace(/\n/g, '\n// ')}`)).toEqual(
      [],
    );
    expect(
      realWaitsIn('shared/x/src/x.test.ts', `const script = \`${source.replace(/`/g, '')}\`;`),
    ).toEqual([]);
  });

  it.each([
    ['fake timers', 'vi.useFakeTimers();\nawait vi.advanceTimersByTimeAsync(200);'],
    ['an injected clock', 'const clock = { now: () => now, sleep: (ms) => (now += ms) };'],
    ['a stamp to build a date from', 'const longAgo = new Date(Date.now() - graceMs);'],
    ['a turn of the loop', 'await new Promise((resolve) => setImmediate(resolve));'],
    ['a child that sleeps', "spawn('flock', ['--no-fork', lockPath, 'sleep', '30']);"],
    ['a method named like a timer', 'socket.setTimeout(1_000);'],
  ])('passes %s', (_name, source) => {
    expect(realWaitsIn('shared/x/src/x.test.ts', source)).toEqual([]);
  });

  it('finds a planted sleep in a unit test file of a workspace, and not in an e2e file', async () => {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'real-waits-'));
    onTestFinished(() => rm(tmp, { recursive: true, force: true }));
    const sleep = "it('x', async () => {\n  await new Promise((r) => setTimeout(r, 50));\n});\n";
    for (const file of ['shared/lock/src/deep/x.test.ts', 'test/e2e/x.test.ts']) {
      await mkdir(path.dirname(path.join(tmp, file)), { recursive: true });
      await writeFile(path.join(tmp, file), sleep);
    }
    expect(await findRealWaits(tmp, include)).toEqual([
      { file: 'shared/lock/src/deep/x.test.ts', line: 2, rule: 'real timer' },
    ]);
  });

  it('blanks comments and strings but keeps line breaks and module names', () => {
    const source =
      "a; // setTimeout(\nb = `x\n${y}`; c = 'setInterval(';\nimport { x } from 'node:timers/promises';";
    const code = codeOnly(source);
    expect(code.split('\n')).toHaveLength(4);
    expect(code).toContain("from 'node:timers/promises'");
    expect(code).not.toMatch(/setTimeout|setInterval/);
  });
});
