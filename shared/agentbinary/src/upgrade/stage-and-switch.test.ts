// Over 300 lines because it is five tables (switches, refusals, sequences, the
// inspection, rollbacks) over one set of fakes; split apart, each would repeat the
// call order and the invariants.
import { realpathSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { UpgradeSignal } from '@aks-flex-node/api';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { daemonInstanceId } from './upgrade-state.js';
import { judgeStartedUpgrade } from './judge-started-upgrade.js';
import {
  inspectCandidate,
  isOneBarePath,
  rollbackUpgradeFiles,
  stageAndSwitch,
  type StageOptions,
} from './stage-and-switch.js';
import {
  assertInvariants,
  at,
  blueOnly,
  fakeJudgeHost,
  fakeStageHost,
  installedLayout,
  legacyPlainBinary,
  link,
  log,
  newLayout,
  operationId,
  readSignal,
  resolvedName,
  runVersion,
  selection,
  signalBytes,
  upgradeUnderLock,
  writeSignal,
  type BinaryName,
  type FakeFetch,
  type Layout,
} from './test-fixtures.js';

/** The calls of a stage that switched, in the order the spec requires (§3.3 steps 3–9, §3.4). */
const switchCalls = (): string[] => [
  'phase recording',
  'phase downloading',
  'fetchCandidate',
  'phase extracting',
  'extract staged',
  'cleanup',
  'phase verifying',
  'phase switching',
];

interface SwitchCase {
  setup: (l: Layout) => Promise<void>;
  previous: BinaryName;
  candidate: 'blue' | 'green';
  /** Where last-good resolved while the candidate was written: the protection decision. */
  lastGoodAtInstall: BinaryName;
  lastGood: BinaryName;
  /** Where the plain binary resolves afterwards: current's slot, or itself on a legacy host. */
  binary: BinaryName;
}

const switches: Record<string, SwitchCase> = {
  'agentbinary#116 a switch from blue: current → green, last-good → blue': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    previous: 'blue',
    candidate: 'green',
    lastGoodAtInstall: 'blue',
    lastGood: 'blue',
    binary: 'green',
  },
  'agentbinary#113 blue only (no links) is initialised, then switched to green': {
    setup: blueOnly,
    previous: 'blue',
    candidate: 'green',
    lastGoodAtInstall: 'blue',
    lastGood: 'blue',
    binary: 'green',
  },
  'agentbinary#22 a legacy plain binary seeds blue, and the candidate goes to green': {
    setup: legacyPlainBinary,
    previous: 'blue',
    candidate: 'green',
    lastGoodAtInstall: 'blue',
    lastGood: 'blue',
    binary: 'green',
  },
  // The plain binary is first seeded into blue (it is about to become a link),
  // so the rollback target survives the switch: spec #110's Go behaviour lost it.
  'agentbinary#110 a plain binary as current and last-good is seeded into blue first: current → green, last-good → blue':
    {
      setup: (l) => installedLayout(l, 'binary', 'binary'),
      previous: 'blue',
      candidate: 'green',
      lastGoodAtInstall: 'blue',
      lastGood: 'blue',
      binary: 'green',
    },
  'agentbinary#115 last-good names the inactive slot: the candidate is staged beside it, and last-good moves to the running binary before the slot is replaced':
    {
      setup: (l) => installedLayout(l, 'green', 'blue'),
      previous: 'green',
      candidate: 'blue',
      lastGoodAtInstall: 'blue',
      lastGood: 'green',
      binary: 'blue',
    },
  'agentbinary§3.3 step 8 a distinct last-good moves to the running binary only after the candidate verified':
    {
      setup: (l) => installedLayout(l, 'blue', 'lookAlike'),
      previous: 'blue',
      candidate: 'green',
      lastGoodAtInstall: 'lookAlike',
      lastGood: 'blue',
      binary: 'green',
    },
};

describe('stageAndSwitch: switches (spec agentbinary §3.3, §3.4)', () => {
  it.each(Object.entries(switches))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const host = fakeStageHost(l);

    const result = await stageAndSwitch(host.options);

    expect(result).toMatchObject({
      previous: at(l, row.previous),
      candidate: at(l, row.candidate),
    });
    expect(result.candidateVersion.version).toBe('v2');
    expect(host.calls).toEqual(switchCalls());
    expect(host.cleanups).toBe(1);
    expect(host.lastGoodAtInstall).toBe(row.lastGoodAtInstall);
    expect(await selection(l)).toEqual({ current: row.candidate, lastGood: row.lastGood });
    expect(await resolvedName(l, l.paths.binary)).toBe(row.binary);
    expect((await runVersion(l.paths.current)).version).toBe('v2');
    // The candidate and the previous path were recorded before anything was downloaded.
    expect(host.signalAtFetch).toEqual({
      operationName: operationId,
      initiatingDaemonInstance: daemonInstanceId,
      sourceUrl: host.options.redactedUrl,
      startedAt: '2026-01-01T00:00:00.000Z',
      candidatePath: at(l, row.candidate),
      previousPath: at(l, row.previous),
    });
    expect(await readSignal(l)).toEqual({
      ...host.signalAtFetch,
      switchCommitted: true,
      switchedAt: '2026-01-01T00:00:01.000Z',
      candidateVersion: 'v2',
    });
    await assertInvariants(l);

    // A second upgrade while this one is pending is refused and changes nothing.
    const before = { selection: await selection(l), signal: await signalBytes(l) };
    const second = fakeStageHost(l, { operationId: 'op-2' });
    await expect(upgradeUnderLock(second.options)).rejects.toMatchObject({
      code: 'ACTIVATION_IN_PROGRESS',
    });
    expect(second.calls).not.toContain('fetchCandidate');
    expect({ selection: await selection(l), signal: await signalBytes(l) }).toEqual(before);
    await assertInvariants(l);
  });
});

interface RefusalCase {
  setup: (l: Layout) => Promise<void>;
  /** The fakes that fail; the rest are the defaults. */
  fakes: Partial<StageOptions> & FakeFetch;
  error: { code?: string; message: RegExp };
  after: { current: string; lastGood: string };
  /** absent: cleared or never written; untouched: the same bytes as before. */
  signal: 'absent' | 'untouched';
  cleanups: number;
  /** The last call the stage made before it failed; none when it was refused before it ran. */
  lastCall: string | undefined;
}

/**
 * A clock whose second reading (the switch's timestamp, taken after current
 * moved) throws; `seen` gets where current resolved then, and `sabotage` runs
 * first, to break what the rollback needs.
 */
function clockFailingAfterSwitch(l: Layout, seen: string[], sabotage = () => {}): () => Date {
  let readings = 0;
  return () => {
    readings += 1;
    if (readings === 1) return new Date('2026-01-01T00:00:00.000Z');
    seen.push(realpathSync(l.paths.current));
    sabotage();
    throw new Error('clock unavailable');
  };
}

const refusals: Record<string, RefusalCase> = {
  'agentbinary#120 a candidate that fails `version` leaves current and last-good blue': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    fakes: { candidate: 'fails' },
    error: { message: /does not run: `version` failed/ },
    after: { current: 'blue', lastGood: 'blue' },
    signal: 'absent',
    cleanups: 1,
    lastCall: 'phase verifying',
  },
  'agentbinary#121 a refused candidate leaves a distinct last-good unchanged': {
    setup: (l) => installedLayout(l, 'blue', 'lookAlike'),
    fakes: { candidate: 'predates-host-root' },
    error: { message: /predates the host root/ },
    after: { current: 'blue', lastGood: 'lookAlike' },
    signal: 'absent',
    cleanups: 1,
    lastCall: 'phase verifying',
  },
  'agentbinary§6.5 a failed download changes no link and leaves no archive to clean up': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    fakes: { downloadFails: 'download: HTTP 404' },
    error: { message: /HTTP 404/ },
    after: { current: 'green', lastGood: 'blue' },
    signal: 'absent',
    cleanups: 0,
    lastCall: 'fetchCandidate',
  },
  'agentbinary§6.5 a failed extraction leaves current and a distinct last-good, and removes the archive':
    {
      setup: (l) => installedLayout(l, 'blue', 'lookAlike'),
      fakes: { extractionFails: 'unexpected member other-agent' },
      error: { message: /unexpected member/ },
      after: { current: 'blue', lastGood: 'lookAlike' },
      signal: 'absent',
      cleanups: 1,
      lastCall: 'cleanup',
    },
  // The candidate is staged and proven before anything moves, so even
  // last-good naming the slot to be written stays where it was.
  "agentbinary§6.5 a failed extraction over last-good's slot leaves every link where it was": {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    fakes: { extractionFails: 'duplicate member' },
    error: { message: /duplicate member/ },
    after: { current: 'green', lastGood: 'blue' },
    signal: 'absent',
    cleanups: 1,
    lastCall: 'cleanup',
  },
  'agentbinary§3.2.1 no executable binary to start from is refused and the signal cleared': {
    setup: () => Promise.resolve(),
    fakes: {},
    error: { code: 'NOT_FOUND', message: /no executable agent binary found/ },
    after: { current: 'missing', lastGood: 'missing' },
    signal: 'absent',
    cleanups: 0,
    lastCall: 'phase recording',
  },
  'agentbinary#7 a pending upgrade refuses with ACTIVATION_IN_PROGRESS naming it, its signal untouched':
    {
      setup: async (l) => {
        await installedLayout(l, 'green', 'blue');
        const pending = fakeStageHost(l).options;
        await stageAndSwitch({
          ...pending,
          clock: { wallClock: () => new Date('2025-12-31T00:00:00.000Z') },
        });
      },
      fakes: { operationId: 'op-2' },
      error: { code: 'ACTIVATION_IN_PROGRESS', message: /already pending \(op-1\)/ },
      after: { current: 'blue', lastGood: 'green' },
      signal: 'untouched',
      cleanups: 0,
      lastCall: undefined,
    },
};

describe('stageAndSwitch: refusals change no link they must keep (every row runs twice)', () => {
  it.each(Object.entries(refusals))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const signalBefore = await signalBytes(l);
    for (let run = 1; run <= 2; run++) {
      const host = fakeStageHost(l, row.fakes);
      const error: unknown = await upgradeUnderLock(host.options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(row.error.message);
      if (row.error.code !== undefined) expect(error).toMatchObject({ code: row.error.code });
      expect(host.calls.at(-1)).toBe(row.lastCall);
      expect(host.calls).not.toContain('phase switching');
      expect(host.cleanups).toBe(row.cleanups);
      expect(await selection(l)).toEqual(row.after);
      if (row.signal === 'absent') expect(await signalBytes(l)).toBeUndefined();
      else expect(await signalBytes(l)).toBe(signalBefore);
      await assertInvariants(l);
    }
  });

  it('agentbinary#12 a failure after the switch points current back at last-good and clears the signal', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const currentWhenFailing: string[] = [];
    const host = fakeStageHost(l, {
      clock: { wallClock: clockFailingAfterSwitch(l, currentWhenFailing) },
    });

    await expect(stageAndSwitch(host.options)).rejects.toThrow('clock unavailable');

    // The switch had happened: the rollback is what brought current back.
    expect(currentWhenFailing).toEqual([l.paths.green]);
    expect(host.cleanups).toBe(1);
    expect(await selection(l)).toEqual({ current: 'blue', lastGood: 'blue' });
    expect(await readlink(l.paths.current)).toBe(l.paths.blue);
    expect(await signalBytes(l)).toBeUndefined();
    await assertInvariants(l);
  });

  it('agentbinary#13 a failure after the switch whose rollback fails keeps the signal for the next start', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const currentWhenFailing: string[] = [];
    // Nothing is left to roll back to.
    const removeLastGood = () => {
      rmSync(l.paths.lastGood);
    };
    const host = fakeStageHost(l, {
      clock: { wallClock: clockFailingAfterSwitch(l, currentWhenFailing, removeLastGood) },
    });

    // The caller sees the failure that stopped the upgrade, not the rollback's.
    await expect(stageAndSwitch(host.options)).rejects.toThrow('clock unavailable');

    expect(currentWhenFailing).toEqual([l.paths.green]);
    expect(await selection(l)).toEqual({ current: 'green', lastGood: 'missing' });
    expect(await readSignal(l)).toMatchObject({
      operationName: operationId,
      candidatePath: l.paths.green,
      previousPath: l.paths.blue,
    });
    expect((await readSignal(l))?.switchCommitted).toBeUndefined();
    await assertInvariants(l);
  });
});

describe('stageAndSwitch: sequences (spec agentbinary §1.4 item 4)', () => {
  it('agentbinary§1.4 sequential upgrades alternate slots, and a failed staging does not advance the slot', async () => {
    const l = await newLayout();
    await blueOnly(l);
    const rounds: {
      version: string;
      fails?: true;
      expected: { current: string; lastGood: string };
    }[] = [
      { version: 'v2', expected: { current: 'green', lastGood: 'blue' } },
      { version: 'v3', expected: { current: 'blue', lastGood: 'green' } },
      // green is last-good and the slot to write; a refused candidate leaves it so.
      { version: 'v4', fails: true, expected: { current: 'blue', lastGood: 'green' } },
      { version: 'v5', expected: { current: 'green', lastGood: 'blue' } },
      { version: 'v6', expected: { current: 'blue', lastGood: 'green' } },
    ];
    for (const round of rounds) {
      const host = fakeStageHost(l, {
        version: round.version,
        ...(round.fails === true ? { candidate: 'fails' as const } : {}),
      });
      if (round.fails === true) {
        await expect(stageAndSwitch(host.options)).rejects.toThrow('does not run');
      } else {
        await stageAndSwitch(host.options);
        // The restarted daemon runs the candidate and judges it.
        const restarted = fakeJudgeHost(l, realpathSync(l.paths.current), 'restarted-daemon');
        expect(await judgeStartedUpgrade(restarted.options)).toBe('succeeded');
        expect(restarted.records.map((r) => r.toVersion)).toEqual([round.version]);
        expect((await runVersion(l.paths.current)).version).toBe(round.version);
      }
      expect(await selection(l)).toEqual(round.expected);
      expect(await signalBytes(l)).toBeUndefined();
      await assertInvariants(l);
    }
  });
});

describe('stageAndSwitch: the candidate is staged beside its slot', () => {
  it('a refused candidate leaves the inactive slot byte-for-byte as it was, and no staged file', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const before = await readFile(l.paths.green);
    const host = fakeStageHost(l, { candidate: 'fails' });
    await expect(stageAndSwitch(host.options)).rejects.toThrow('does not run');
    expect(await readFile(l.paths.green)).toEqual(before);
    expect((await readdir(l.paths.slotDir)).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('a candidate a killed upgrade left behind is removed by the next upgrade', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const leftovers = ['.aks-flex-node-candidate-0123456789ab', '.agent-upgrade-feedface'];
    for (const name of leftovers) await writeFile(path.join(l.paths.slotDir, name), 'partial');
    await writeFile(path.join(l.paths.slotDir, 'operator-note'), 'kept');
    await stageAndSwitch(fakeStageHost(l).options);
    const names = await readdir(l.paths.slotDir);
    for (const name of leftovers) expect(names).not.toContain(name);
    expect(names).toContain('operator-note');
  });
});

/** Every entry of the slot directory with its link target or bytes, and the signal: the layout to keep. */
async function layoutBytes(l: Layout): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  for (const name of (await readdir(l.paths.slotDir)).sort()) {
    const file = path.join(l.paths.slotDir, name);
    entries[name] = await readlink(file).catch(async () =>
      (await readFile(file)).toString('base64'),
    );
  }
  entries.signal = (await signalBytes(l)) ?? 'absent';
  return entries;
}

describe('stageAndSwitch: cancel (issue 12 item 4)', () => {
  // Where the cancel arrives: in the fetch once the archive is downloaded, once
  // the member is extracted, as the candidate is verified.
  const cancelAt: Record<string, 'afterDownload' | 'fetched' | 'verifying'> = {
    'issue12#4 a cancel while downloading': 'afterDownload',
    'issue12#4 a cancel while extracting': 'fetched',
    'issue12#4 a cancel while verifying': 'verifying',
  };

  it.each(Object.entries(cancelAt))(
    '%s stops before the switch and leaves the layout byte-for-byte as it was',
    async (_name, step) => {
      const l = await newLayout();
      await installedLayout(l, 'blue', 'blue');
      const before = await layoutBytes(l);
      const controller = new AbortController();
      const cancelled = new AgentError('UPGRADE_FAILED', 'AgentUpgrade op-1 was cancelled');
      const cancel = () => {
        controller.abort(cancelled);
      };
      const host = fakeStageHost(l, step === 'afterDownload' ? { afterDownload: cancel } : {});
      const { port } = host.options;
      const options: StageOptions = {
        ...host.options,
        signal: controller.signal,
        port: {
          fetch: async (target) => {
            await port.fetch(target);
            if (step === 'fetched') cancel();
          },
          report: (phase) => {
            port.report(phase);
            if (step === 'verifying' && phase === 'verifying') cancel();
          },
        },
      };
      await expect(stageAndSwitch(options)).rejects.toBe(cancelled);
      expect(host.calls).not.toContain('phase switching');
      expect(await layoutBytes(l)).toEqual(before);
      await assertInvariants(l);
    },
  );

  it('issue12#4 a cancel once the switch began changes nothing: the upgrade completes', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    const controller = new AbortController();
    const host = fakeStageHost(l);
    const result = await stageAndSwitch({
      ...host.options,
      signal: controller.signal,
      port: {
        fetch: (target) => host.options.port.fetch(target),
        report: (phase) => {
          host.options.port.report(phase);
          if (phase === 'switching') controller.abort(new Error('too late'));
        },
      },
    });
    expect(path.basename(result.candidate)).toContain('green');
    expect(await selection(l)).toMatchObject({ current: 'green', lastGood: 'blue' });
  });
});

describe('inspectCandidate on an installed host', () => {
  // Whether a candidate knows the host root is decided as the Go releases decide
  // it (spec daemon 7.1): its `host-root` command prints one bare path, the one
  // this host uses. Go releases have no `version --json`.
  let tmp: string;
  let paths: HostPaths;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'inspect-candidate-'));
    paths = hostPathsUnder(tmp);
    await mkdir(paths.root, { recursive: true }); // an installed host: the root is a directory
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  /** A Go-style release: `version` prints text, `version --json` is an unknown flag, `host-root` prints `hostRoot`. */
  async function goRelease(hostRoot: string | undefined): Promise<string> {
    const file = path.join(tmp, 'candidate');
    const hostRootCase = hostRoot === undefined ? '' : `host-root) printf '%s\\n' '${hostRoot}' ;;`;
    await writeFile(
      file,
      `#!/bin/sh
case "$1 $2" in
  "version ") echo "aks-flex-node version v0.9.0" ;;
  "version --json") echo "Error: unknown flag: --json" >&2; exit 1 ;;
  *) case "$1" in ${hostRootCase} *) echo "Error: unknown command" >&2; exit 1 ;; esac ;;
esac
`,
      { mode: 0o755 },
    );
    return file;
  }

  it('accepts a Go release whose host-root prints this host root', async () => {
    const info = await inspectCandidate(await goRelease(paths.root), paths);
    expect(info.capabilities).toEqual([]);
  });

  it('refuses a release without a host-root command: it predates the host root', async () => {
    await expect(inspectCandidate(await goRelease(undefined), paths)).rejects.toSatisfy(
      (error) => isAgentError(error, 'UPGRADE_REFUSED') && error.message.includes('host-root'),
    );
  });

  it('refuses a release that uses another host root, naming both', async () => {
    await expect(inspectCandidate(await goRelease('/usr/local'), paths)).rejects.toSatisfy(
      (error) =>
        isAgentError(error, 'UPGRADE_REFUSED') &&
        error.message.includes('/usr/local') &&
        error.message.includes(paths.root),
    );
  });
});

describe('isOneBarePath', () => {
  it.each([
    ['/opt/unbounded/agent\n', true],
    ['/usr/local\n', true],
    ['/opt/unbounded/agent', false],
    ['/opt/unbounded/agent\n\n', false],
    ['host root: /opt/unbounded/agent\n', false],
    [' /opt/unbounded/agent\n', false],
    ['{"path":"/opt/unbounded/agent"}\n', false],
    ['relative/path\n', false],
  ])('%j is %s', (output, expected) => {
    expect(isOneBarePath(output)).toBe(expected);
  });
});

interface RollbackCase {
  setup: (l: Layout) => Promise<void>;
  /** The signal the caller passes; undefined is "no signal". */
  signal: (l: Layout) => Partial<UpgradeSignal> | undefined;
  /** What the first and the second run report; omitted when the rollback must fail. */
  rolledBack?: readonly [boolean, boolean];
  error?: RegExp;
  after: { current: BinaryName | 'missing'; lastGood: BinaryName | 'missing' };
}

const rollbacks: Record<string, RollbackCase> = {
  'agentbinary§3.5 step 1 no signal: nothing to do': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: () => undefined,
    rolledBack: [false, false],
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary#18 a candidate but no switch, and the candidate not active: no downgrade': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: (l) => ({ candidatePath: l.paths.blue, previousPath: l.paths.green }),
    rolledBack: [false, false],
    after: { current: 'green', lastGood: 'blue' },
  },
  'agentbinary#12 a committed switch to green goes back to last-good blue': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
    rolledBack: [true, true],
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.5 step 2 the candidate active without a commit (killed in between) goes back': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: (l) => ({ candidatePath: l.paths.green }),
    // Once current is back this signal no longer shows a switch, so a retry reports no
    // rollback; judge and recovery record recoveryRequired first, so theirs still do.
    rolledBack: [true, false],
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.5 step 3 recoveryRequired restores last-good even with no candidate recorded': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    signal: () => ({ recoveryRequired: true, failure: 'daemon failed' }),
    rolledBack: [true, true],
    after: { current: 'blue', lastGood: 'blue' },
  },
  'agentbinary§3.5 step 5 current already on last-good counts as rolled back and is left as it is':
    {
      setup: (l) => installedLayout(l, 'blue', 'blue'),
      signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
      rolledBack: [true, true],
      after: { current: 'blue', lastGood: 'blue' },
    },
  'agentbinary#51 a candidate that only looks like a slot is never taken as active': {
    setup: (l) => installedLayout(l, 'lookAlike', 'blue'),
    signal: (l) => ({ candidatePath: l.lookAlike }),
    rolledBack: [false, false],
    after: { current: 'lookAlike', lastGood: 'blue' },
  },
  'agentbinary#19 recoveryRequired and no last-good is an error naming last-good': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await rm(l.paths.lastGood);
    },
    signal: (l) => ({ candidatePath: l.paths.green, recoveryRequired: true }),
    error: /resolve last-good agent binary .*: it is missing or dangling/,
    after: { current: 'green', lastGood: 'missing' },
  },
  'agentbinary#13 a committed switch to blue with no links at all is an error': {
    setup: async (l) => {
      await blueOnly(l);
    },
    signal: (l) => ({ candidatePath: l.paths.blue, switchCommitted: true }),
    error: /resolve last-good agent binary/,
    after: { current: 'missing', lastGood: 'missing' },
  },
  'agentbinary§3.5 step 4 a dangling last-good is an error, never a target': {
    setup: async (l) => {
      await installedLayout(l, 'green', 'blue');
      await link(l.paths.lastGood, path.join(l.paths.slotDir, 'aks-flex-node-removed'));
    },
    signal: (l) => ({ candidatePath: l.paths.green, switchCommitted: true }),
    error: /missing or dangling/,
    after: { current: 'green', lastGood: 'missing' },
  },
};

describe('rollbackUpgradeFiles (spec agentbinary §3.5; every row runs twice)', () => {
  it.each(Object.entries(rollbacks))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const fields = row.signal(l);
    const signal = fields === undefined ? undefined : { operationName: operationId, ...fields };
    // The caller's signal file is the caller's: a rollback never writes or removes it.
    if (signal !== undefined) await writeSignal(l, signal);
    const signalBefore = await signalBytes(l);
    for (let run = 1; run <= 2; run++) {
      if (row.error !== undefined) {
        await expect(rollbackUpgradeFiles(l.paths, signal, log)).rejects.toMatchObject({
          code: 'UPGRADE_FAILED',
          path: l.paths.lastGood,
          message: expect.stringMatching(row.error) as unknown,
        });
      } else {
        const result = await rollbackUpgradeFiles(l.paths, signal, log);
        expect(result).toEqual({
          rolledBack: row.rolledBack?.[run - 1],
          current: row.after.current === 'missing' ? undefined : at(l, row.after.current),
        });
      }
      expect(await selection(l)).toEqual(row.after);
      expect(await signalBytes(l)).toBe(signalBefore);
      await assertInvariants(l);
    }
  });
});
