import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { UpgradeSignal } from '@aks-flex-node/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clearUpgradeSignal,
  mayHaveSwitched,
  readUpgradeSignal,
  readUpgradeState,
  settleUpgradeState,
  updateUpgradeSignal,
  writeUpgradeSignal,
  type ReadUpgradeState,
} from './upgrade-state.js';
import {
  installedLayout,
  log,
  newLayout,
  signalBytes,
  writeSignal,
  type Layout,
} from './test-fixtures.js';

/** What a case expects, without the signal itself (the case wrote it). */
type Expected =
  | { kind: 'none' | 'recorded' | 'corrupt' }
  | { kind: 'staged' | 'switched'; candidate: 'blue' | 'green' }
  | { kind: 'committed'; candidate: 'blue' | 'green' | undefined; isCandidateCurrent: boolean }
  | {
      kind: 'failed';
      before: 'recorded' | 'staged' | 'switched' | 'committed';
      mustRunLastGood: boolean;
      isCandidateCurrent: boolean;
    };

/** Text no release could have meant, written as it is. */
class Damaged {
  constructor(readonly raw: string) {}
}

interface StateCase {
  /** The signal's fields, undefined for no signal, or raw text for a damaged one. */
  signal: (l: Layout) => Partial<UpgradeSignal> | undefined | Damaged;
  expected: Expected;
  /** Whether the state asks for last-good back before the upgrade ends. */
  rollsBack: boolean;
}

// Every layout: current green, last-good blue.
const cases: Record<string, StateCase> = {
  'agentbinary§3.5 no signal: no upgrade is in flight': {
    signal: () => undefined,
    expected: { kind: 'none' },
    rollsBack: false,
  },
  'agentbinary§3.3 step 2 the signal names no slot yet: recorded': {
    signal: () => ({}),
    expected: { kind: 'recorded' },
    rollsBack: false,
  },
  'agentbinary#51 a candidate that only looks like a slot is no slot: recorded': {
    signal: (l) => ({ candidatePath: `${l.paths.blue}-old` }),
    expected: { kind: 'recorded' },
    rollsBack: false,
  },
  'agentbinary§3.3 step 3 a slot chosen, current elsewhere: staged': {
    signal: (l) => ({ candidatePath: l.paths.blue }),
    expected: { kind: 'staged', candidate: 'blue' },
    rollsBack: false,
  },
  'agentbinary§3.5 step 2 current names the candidate without a commit: switched': {
    signal: (l) => ({ candidatePath: l.paths.green }),
    expected: { kind: 'switched', candidate: 'green' },
    rollsBack: true,
  },
  'agentbinary§3.3 step 8 switchCommitted recorded: committed, candidate current': {
    signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
    expected: { kind: 'committed', candidate: 'green', isCandidateCurrent: true },
    rollsBack: true,
  },
  'agentbinary#12 committed, but current no longer names the candidate': {
    signal: (l) => ({ candidatePath: l.paths.blue, switchCommitted: true }),
    expected: { kind: 'committed', candidate: 'blue', isCandidateCurrent: false },
    rollsBack: true,
  },
  'agentbinary§6.3 a Go release committed a switch without naming the slot': {
    signal: () => ({ switchCommitted: true }),
    expected: { kind: 'committed', candidate: undefined, isCandidateCurrent: false },
    rollsBack: true,
  },
  'agentbinary§3.7 a failure judged with the candidate current: failed, switch possible': {
    signal: (l) => ({ candidatePath: l.paths.green, failure: 'crashed' }),
    expected: {
      kind: 'failed',
      before: 'switched',
      mustRunLastGood: false,
      isCandidateCurrent: true,
    },
    rollsBack: true,
  },
  'agentbinary§3.7 a failure before the switch: failed, never downgraded': {
    signal: (l) => ({ candidatePath: l.paths.blue, failure: 'interrupted' }),
    expected: {
      kind: 'failed',
      before: 'staged',
      mustRunLastGood: false,
      isCandidateCurrent: false,
    },
    rollsBack: false,
  },
  'agentbinary§3.5 step 3 recoveryRequired: failed, last-good must run': {
    signal: () => ({ failure: 'recovered', recoveryRequired: true }),
    expected: {
      kind: 'failed',
      before: 'recorded',
      mustRunLastGood: true,
      isCandidateCurrent: false,
    },
    rollsBack: true,
  },
  'agentbinary§6.3 a failure after a committed switch current left: failed, switch possible': {
    signal: (l) => ({ candidatePath: l.paths.blue, switchCommitted: true, failure: 'x' }),
    expected: {
      kind: 'failed',
      before: 'committed',
      mustRunLastGood: false,
      isCandidateCurrent: false,
    },
    rollsBack: true,
  },
  'agentbinary#damage a torn signal is corrupt, never none': {
    signal: () => new Damaged('{"operationName":"op-1","candid'),
    expected: { kind: 'corrupt' },
    rollsBack: false,
  },
};

async function layoutWith(signal: ReturnType<StateCase['signal']>, l: Layout): Promise<void> {
  await installedLayout(l, 'green', 'blue');
  if (signal === undefined) return;
  if (signal instanceof Damaged) {
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, signal.raw);
    return;
  }
  await writeSignal(l, signal);
}

function simplified(l: Layout, state: ReadUpgradeState): Expected {
  const name = (file: string | undefined): 'blue' | 'green' | undefined =>
    file === l.paths.blue ? 'blue' : file === l.paths.green ? 'green' : undefined;
  switch (state.kind) {
    case 'none':
    case 'recorded':
    case 'corrupt':
      return { kind: state.kind };
    case 'staged':
    case 'switched':
      return { kind: state.kind, candidate: name(state.candidate) ?? 'blue' };
    case 'committed':
      return {
        kind: 'committed',
        candidate: name(state.candidate),
        isCandidateCurrent: state.isCandidateCurrent,
      };
    case 'failed':
      return {
        kind: 'failed',
        before: state.before,
        mustRunLastGood: state.mustRunLastGood,
        isCandidateCurrent: state.isCandidateCurrent,
      };
    default: {
      const unknown: never = state;
      throw new Error(`unknown state ${JSON.stringify(unknown)}`);
    }
  }
}

describe('readUpgradeState', () => {
  it.each(Object.entries(cases))('%s', async (_name, c) => {
    const l = await newLayout();
    await layoutWith(c.signal(l), l);
    const before = await signalBytes(l);
    const state = await readUpgradeState(l.paths, l.signalFile);
    expect(simplified(l, state)).toEqual(c.expected);
    if (state.kind !== 'corrupt') expect(mayHaveSwitched(state)).toBe(c.rollsBack);
    // Reading is only reading: twice gives the same, and the signal's bytes stay.
    expect(simplified(l, await readUpgradeState(l.paths, l.signalFile))).toEqual(c.expected);
    expect(await signalBytes(l)).toBe(before);
  });
});

describe('settleUpgradeState', () => {
  const now = () => new Date('2026-01-01T00:00:00.000Z');

  it('agentbinary#damage a corrupt signal is set aside and current green is judged again: committed', async () => {
    const l = await newLayout();
    await layoutWith(new Damaged('not json'), l);
    const state = await settleUpgradeState({
      paths: l.paths,
      signalFile: l.signalFile,
      log,
      now,
    });
    expect(simplified(l, state)).toEqual({
      kind: 'committed',
      candidate: 'green',
      isCandidateCurrent: true,
    });
    expect(state.kind === 'committed' && state.signal.corruptSignal).toMatch(/not valid JSON/);
    const kept = (await readdir(path.dirname(l.signalFile))).filter((f) => f.includes('.corrupt-'));
    expect(kept).toHaveLength(1);
  });

  it('agentbinary#damage a corrupt signal beside current on last-good leaves none', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await mkdir(path.dirname(l.signalFile), { recursive: true });
    await writeFile(l.signalFile, '');
    const options = { paths: l.paths, signalFile: l.signalFile, log, now };
    expect(await settleUpgradeState(options)).toEqual({ kind: 'none' });
    expect(await signalBytes(l)).toBeUndefined();
  });

  it('agentbinary§3.3 a valid signal is read as it is, unchanged', async () => {
    const l = await newLayout();
    await layoutWith({ candidatePath: l.paths.blue }, l);
    const before = await signalBytes(l);
    const options = { paths: l.paths, signalFile: l.signalFile, log, now };
    expect((await settleUpgradeState(options)).kind).toBe('staged');
    expect(await signalBytes(l)).toBe(before);
  });
});

describe('upgrade signal file', () => {
  let tmp: string;
  let file: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'signal-'));
    file = path.join(tmp, 'etc/aks-flex-node/agent-upgrade-signal.json');
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('agentbinary#8 pending → candidate → switchCommitted → failure reads back, mode 0600; clear removes it', async () => {
    await writeUpgradeSignal(file, {
      operationName: 'op-1',
      activeMachine: 'kube1',
      initiatingDaemonInstance: 'abc',
    });
    await updateUpgradeSignal(file, { candidatePath: '/r/lib/aks-flex-node/aks-flex-node-green' });
    await updateUpgradeSignal(file, { switchCommitted: true });
    await updateUpgradeSignal(file, { failure: 'daemon failed', recoveryRequired: true });
    expect(await readUpgradeSignal(file)).toEqual({
      operationName: 'op-1',
      activeMachine: 'kube1',
      initiatingDaemonInstance: 'abc',
      candidatePath: '/r/lib/aks-flex-node/aks-flex-node-green',
      switchCommitted: true,
      failure: 'daemon failed',
      recoveryRequired: true,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).endsWith('}\n')).toBe(true);
    await clearUpgradeSignal(file);
    expect(await readUpgradeSignal(file)).toBeUndefined();
    await clearUpgradeSignal(file);
  });

  it('agentbinary#9 an active machine that could traverse paths is an error', async () => {
    await writeFile(
      path.join(tmp, 'bad.json'),
      JSON.stringify({ operationName: 'op', activeMachine: '../../etc' }),
    );
    await expect(readUpgradeSignal(path.join(tmp, 'bad.json'))).rejects.toThrow(
      /invalid active machine/,
    );
  });

  it.each([
    ['invalid JSON', '{"operationName":'],
    ['an empty operation name', '{"operationName":"  "}'],
  ])('%s is an error, never "no signal"', async (_name, content) => {
    await writeFile(path.join(tmp, 's.json'), content);
    await expect(readUpgradeSignal(path.join(tmp, 's.json'))).rejects.toThrow(/upgrade signal/);
  });

  it('keeps fields an earlier release wrote that this one does not know', async () => {
    await writeFile(
      path.join(tmp, 's.json'),
      JSON.stringify({ operationName: 'op', observedMachineGeneration: 7 }),
    );
    await updateUpgradeSignal(path.join(tmp, 's.json'), { switchCommitted: true });
    expect(JSON.parse(await readFile(path.join(tmp, 's.json'), 'utf8'))).toEqual({
      operationName: 'op',
      observedMachineGeneration: 7,
      switchCommitted: true,
    });
  });

  it('updating a missing signal is an error and creates nothing', async () => {
    await expect(updateUpgradeSignal(file, { switchCommitted: true })).rejects.toThrow(
      /no pending AgentUpgrade signal/,
    );
    expect(await readUpgradeSignal(file)).toBeUndefined();
  });
});
