import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reinstallCommand } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import { inspectAgentLink } from '../agent-link.js';
import {
  readSettledSignal,
  readUpgradeSignalState,
  type CorruptSignalSetAside,
} from './upgrade-state.js';
import { convergeCurrentLink } from './converge-current.js';
import { judgeStartedUpgrade } from './judge-started-upgrade.js';
import { recoverAgentUpgrade } from './recover-agent-upgrade.js';
import {
  fakeJudgeHost,
  installedLayout,
  log,
  newLayout,
  selection,
  type Layout,
} from './test-fixtures.js';

// Issue 22 items 2 and 3: a corrupt signal and a `current` that cannot run
// are states the start, the guard and recovery converge from, never loop on.

/** What a torn write, a hand edit or a bad disk leaves in the signal file. */
const corruptSignals = [
  ['empty', '', 'it is empty'],
  ['whitespace only', '\n \n', 'it is empty'],
  ['garbage', '{garbage', 'it is not valid JSON'],
  ['truncated JSON', '{"operationName":"op-7","candidatePath":"/opt/unb', 'it is not valid JSON'],
  ['the wrong shape', '[1,2,3]', 'it is not an upgrade signal'],
  ['no operation', '{"switchCommitted":true}', 'it is not an upgrade signal'],
] as const;

/** Damage that leaves `current` unable to run, applied to the green slot current names. */
const brokenCurrents = {
  dangling: async (l: Layout) => {
    await rm(l.paths.green, { force: true });
  },
  directory: async (l: Layout) => {
    await rm(l.paths.green, { force: true });
    await mkdir(l.paths.green);
  },
  empty: async (l: Layout) => {
    await writeFile(l.paths.green, '', { mode: 0o755 });
  },
  'not executable': async (l: Layout) => {
    await chmod(l.paths.green, 0o644);
  },
} as const;

const now = () => new Date('2026-12-03T13:15:00.123Z');

async function asideFiles(l: Layout): Promise<string[]> {
  const dir = path.dirname(l.signalFile);
  return (await readdir(dir)).filter((name) => name.includes('.corrupt-')).sort();
}

describe('issue22#2 the one signal reader says corrupt', () => {
  it.each(corruptSignals)('%s is corrupt: %s', async (_name, text, reason) => {
    const l = await newLayout();
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, text);
    const state = await readUpgradeSignalState(l.signalFile);
    expect(state.kind).toBe('corrupt');
    if (state.kind === 'corrupt') expect(state.reason).toContain(reason);
  });

  it('a truncated signal that still names its operation in full gives the id back', async () => {
    const l = await newLayout();
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, '{"operationName":"op-7","candidatePath":"/opt/unb');
    expect(await readUpgradeSignalState(l.signalFile)).toMatchObject({
      kind: 'corrupt',
      salvagedOperation: 'op-7',
    });
  });
});

describe('issue22#2 a corrupt signal is set aside under a name that says so', () => {
  it.each(corruptSignals)(
    '%s, current = last-good: kept as .corrupt-<UTC time>, no signal remains, twice is a no-op',
    async (_name, text) => {
      const l = await newLayout();
      await installedLayout(l, 'blue', 'blue');
      await mkdir(path.dirname(l.signalFile), { recursive: true });
      await writeFile(l.signalFile, text);
      const seen: CorruptSignalSetAside[] = [];
      const options = {
        paths: l.paths,
        signalFile: l.signalFile,
        log,
        now,
        onSetAside: (s: CorruptSignalSetAside) => seen.push(s),
      };
      expect(await readSettledSignal(options)).toBeUndefined();
      expect(await asideFiles(l)).toEqual(['agent-upgrade-signal.json.corrupt-20261203T131500Z']);
      expect(await readFile(`${l.signalFile}.corrupt-20261203T131500Z`, 'utf8')).toBe(text);
      expect((await readUpgradeSignalState(l.signalFile)).kind).toBe('absent');
      expect(seen).toHaveLength(1);
      // Idempotent: nothing corrupt is left, so nothing more is set aside.
      expect(await readSettledSignal(options)).toBeUndefined();
      expect(await asideFiles(l)).toHaveLength(1);
      expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    },
  );

  it('current runs a slot other than last-good: the rebuilt signal judges current again, nothing is downgraded', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, '{"operationName":"op-7","candid');
    const rebuilt = await readSettledSignal({ paths: l.paths, signalFile: l.signalFile, log, now });
    expect(rebuilt).toMatchObject({
      operationName: 'op-7',
      candidatePath: l.paths.green,
      previousPath: l.paths.blue,
      switchCommitted: true,
    });
    expect(rebuilt?.corruptSignal).toContain('set aside as');
    expect(await selection(l)).toEqual({ current: 'green', lastGood: 'blue' });
    // The daemon that started from current and stayed up judges it a success and keeps it.
    const notes: string[] = [];
    const host = fakeJudgeHost(l, l.paths.green, 'new-daemon', {
      now,
      onNote: (note) => notes.push(note),
    });
    expect(await judgeStartedUpgrade(host.options)).toBe('succeeded');
    expect(notes[0]).toContain('started and stayed up after a corrupt signal was set aside');
    expect(host.records[0]?.message).toContain(
      'started and stayed up after a corrupt signal was set aside',
    );
    expect(await selection(l)).toEqual({ current: 'green', lastGood: 'blue' });
    expect((await readUpgradeSignalState(l.signalFile)).kind).toBe('absent');
  });

  it('the judge at start sets a garbage signal aside and says so; the start goes on (no retry loop)', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, '{garbage');
    const notes: string[] = [];
    const host = fakeJudgeHost(l, l.paths.blue, 'new-daemon', {
      now,
      onNote: (note) => notes.push(note),
    });
    expect(await judgeStartedUpgrade(host.options)).toBe('no-signal');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^set a corrupt AgentUpgrade signal aside as .*\.corrupt-20261203T131500Z \(it is not valid JSON .*\); no AgentUpgrade was pending$/,
    );
  });

  it('recovery after the candidate failed: a corrupt signal with current ≠ last-good rolls current back', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, '');
    const result = await recoverAgentUpgrade(l.paths, l.signalFile, 'the agent failed', log);
    expect(result).toEqual({ rolledBack: true, current: l.paths.blue });
    expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
  });
});

describe('issue22#3 a current that cannot run is pointed at last-good', () => {
  it.each(Object.entries(brokenCurrents))(
    'current %s, last-good intact: repointed, twice is a no-op',
    async (_name, damage) => {
      const l = await newLayout();
      await installedLayout(l, 'green', 'blue');
      await damage(l);
      expect((await inspectAgentLink(l.paths.current)).kind).not.toBe('runnable');
      expect(await convergeCurrentLink(l.paths, log)).toMatchObject({
        kind: 'repointed',
        current: l.paths.blue,
      });
      expect(await convergeCurrentLink(l.paths, log)).toEqual({
        kind: 'runnable',
        current: l.paths.blue,
      });
      expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    },
  );

  it.each(Object.entries(brokenCurrents))(
    'current %s, no signal: recover-agent-upgrade repoints it (the recovery unit has nothing else to go on)',
    async (_name, damage) => {
      const l = await newLayout();
      await installedLayout(l, 'green', 'blue');
      await damage(l);
      expect(await recoverAgentUpgrade(l.paths, l.signalFile, 'x', log)).toEqual({
        rolledBack: true,
        current: l.paths.blue,
      });
    },
  );

  it('a runnable current other than last-good is left alone with no signal: no downgrade', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    expect(await recoverAgentUpgrade(l.paths, l.signalFile, 'x', log)).toEqual({
      rolledBack: false,
      current: l.paths.green,
    });
    expect(await selection(l)).toEqual({ current: 'green', lastGood: 'blue' });
  });

  it('neither link runs: NOT_EXECUTABLE names both, and the hint is the reinstall line as printed', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'green');
    await rm(l.paths.green);
    const error: unknown = await convergeCurrentLink(l.paths, log).catch((e: unknown) => e);
    expect(isAgentError(error, 'NOT_EXECUTABLE')).toBe(true);
    if (!isAgentError(error)) return;
    expect(error.message).toContain(`${l.paths.current} is dangling`);
    expect(error.message).toContain(`${l.paths.lastGood} is dangling`);
    expect(error.hint).toBe(
      `reinstall the agent with: ${reinstallCommand(process.arch === 'arm64' ? 'arm64' : 'amd64')}`,
    );
  });
});
