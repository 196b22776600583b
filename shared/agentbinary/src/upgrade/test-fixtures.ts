/**
 * Named fixtures for the upgrade tests (spec agentbinary §1.2, §3.3–3.8, §7).
 * A layout is a temp root with the Flex names from shared/layout; the host
 * effects the code takes as functions (archive, candidate, restart, records)
 * are fakes that log their calls, so a test can assert the order of steps.
 * Over 300 lines because all five upgrade test files share these fixtures,
 * so that each case names a layout rather than building one.
 */
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  operationSchema,
  versionInfoSchema,
  type Operation,
  type UpgradeSignal,
  type VersionInfo,
} from '@aks-flex-node/api';
import { runCommand, writeFileAtomic } from '@aks-flex-node/fs';
import type { HostRootPaths } from '@aks-flex-node/hostroot';
import { createSilentLogger } from '@aks-flex-node/log';
import { expect, onTestFinished } from 'vitest';
import { agentBinaryPathsUnder, type AgentBinaryPaths } from '../agent-binary-paths.js';
import type { JudgeOptions } from './judge-started-upgrade.js';
import { readUpgradeSignal, refusePendingUpgrade, writeUpgradeSignal } from './upgrade-state.js';
import { stageAndSwitch, type StageOptions, type StageResult } from './stage-and-switch.js';

export const log = createSilentLogger();

/** The operation every fixture signal names. */
export const operationId = 'op-1';

/** A host in a temp directory: the root's layout, and the signal outside the root as on a host. */
export interface Layout {
  readonly tmp: string;
  readonly paths: AgentBinaryPaths;
  /** The host root over that layout, installed (a directory): a candidate must know it. */
  readonly hostRoot: HostRootPaths;
  readonly signalFile: string;
  /** A binary outside the layout, as a stale copy the daemon could have been started from. */
  readonly stray: string;
  /** `…/aks-flex-node-blue-old`: in the slot directory, but not a slot (spec #51). */
  readonly lookAlike: string;
}

/**
 * The binaries by the names the tables use: the slots, the plain binary, a
 * stray copy outside the layout, and a file that only looks like a slot.
 */
export type BinaryName = 'blue' | 'green' | 'binary' | 'stray' | 'lookAlike';
const binaryNames: readonly BinaryName[] = ['blue', 'green', 'binary', 'stray', 'lookAlike'];

/**
 * An empty layout: `bin/` and `lib/aks-flex-node/` exist, nothing in them.
 * The temp dir is resolved first: the code compares resolved paths (spec §1.4 item 2).
 */
export async function newLayout(): Promise<Layout> {
  const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-upgrade-')));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = agentBinaryPathsUnder(
    path.join(tmp, 'opt/unbounded/agent'),
    path.join(tmp, 'var/lib/machines'),
  );
  await mkdir(path.dirname(paths.binary), { recursive: true });
  await mkdir(paths.slotDir, { recursive: true });
  const l: Layout = {
    tmp,
    paths,
    hostRoot: { root: paths.root, legacy: path.join(tmp, 'usr/local') },
    signalFile: path.join(tmp, 'etc/aks-flex-node/agent-upgrade-signal.json'),
    stray: path.join(tmp, 'usr/local/bin/aks-flex-node'),
    lookAlike: path.join(paths.slotDir, 'aks-flex-node-blue-old'),
  };
  await agentScript(l.stray, 'stray');
  return l;
}

/** Where a table's name points. */
export function at(l: Layout, name: BinaryName): string {
  switch (name) {
    case 'blue':
    case 'green':
    case 'binary':
      return l.paths[name];
    case 'stray':
    case 'lookAlike':
      return l[name];
    default: {
      const unknown: never = name;
      throw new Error(`unknown binary ${String(unknown)}`);
    }
  }
}

/** An executable that answers `version --json` with `version`, as a release binary would. */
export async function agentScript(file: string, version: string): Promise<void> {
  const info: VersionInfo = {
    version,
    commit: 'c0ffee',
    arch: 'amd64',
    node: '24',
    capabilities: ['host-root'],
  };
  await writeFileAtomic(file, `#!/bin/sh\necho '${JSON.stringify(info)}'\n`, { mode: 0o755 });
}

/** Runs the binary as the real candidate check does, and parses its answer. */
export async function runVersion(file: string): Promise<VersionInfo> {
  const { exitCode, stdout, stderr } = await runCommand(file, ['version', '--json'], 30_000);
  if (exitCode !== 0) throw new Error(`${file} version --json: exit status ${exitCode}: ${stderr}`);
  return versionInfoSchema.parse(JSON.parse(stdout));
}

export async function link(linkPath: string, target: string): Promise<void> {
  await rm(linkPath, { force: true });
  await symlink(target, linkPath);
}

/**
 * A managed layout (spec §1.4 item 1): both slots hold a binary that reports
 * its slot's name, current and last-good name the given ones, and the plain
 * binary links to current.
 */
export async function installedLayout(
  l: Layout,
  current: BinaryName,
  lastGood: BinaryName,
): Promise<void> {
  for (const name of new Set<BinaryName>(['blue', 'green', current, lastGood])) {
    if (name !== 'stray') await agentScript(at(l, name), name);
  }
  await link(l.paths.current, at(l, current));
  await link(l.paths.lastGood, at(l, lastGood));
  // A plain binary that current or last-good names stays a file, as on a legacy host.
  if (current !== 'binary' && lastGood !== 'binary') await link(l.paths.binary, l.paths.current);
}

/** Spec #22: only the plain binary a pre-blue/green release installed. */
export async function legacyPlainBinary(l: Layout): Promise<void> {
  await agentScript(l.paths.binary, 'legacy');
}

/** Spec #113: the blue slot alone, no links yet. */
export async function blueOnly(l: Layout): Promise<void> {
  await agentScript(l.paths.blue, 'blue');
}

/** Writes the fixture operation's signal with these fields. */
export async function writeSignal(l: Layout, fields: Partial<UpgradeSignal>): Promise<void> {
  await writeUpgradeSignal(l.signalFile, { operationName: operationId, ...fields });
}

export async function readSignal(l: Layout): Promise<UpgradeSignal | undefined> {
  return readUpgradeSignal(l.signalFile);
}

/** The signal's bytes, or undefined: "untouched" means the same bytes. */
export async function signalBytes(l: Layout): Promise<string | undefined> {
  try {
    return await readFile(l.signalFile, 'utf8');
  } catch {
    return undefined;
  }
}

/** Where a link resolves, by table name where it is one; 'missing' when it does not resolve. */
export async function resolvedName(l: Layout, file: string): Promise<string> {
  let resolved: string;
  try {
    resolved = await realpath(file);
  } catch {
    return 'missing';
  }
  return binaryNames.find((name) => at(l, name) === resolved) ?? resolved;
}

/** current and last-good by table name, for comparing a whole state at once. */
export async function selection(l: Layout): Promise<{ current: string; lastGood: string }> {
  return {
    current: await resolvedName(l, l.paths.current),
    lastGood: await resolvedName(l, l.paths.lastGood),
  };
}

/**
 * The invariants every row ends with. The signal is either absent or names
 * the operation (spec §6.3: nothing creates a signal for another one, and a
 * kept signal stays readable). Links the code wrote are absolute (§1.4 item 2)
 * and, where present, resolve to an executable.
 */
export async function assertInvariants(l: Layout): Promise<void> {
  const signal = await readUpgradeSignal(l.signalFile);
  if (signal !== undefined) expect(signal.operationName).toBe(operationId);
  for (const file of [l.paths.current, l.paths.lastGood]) {
    const info = await lstat(file).catch(() => undefined);
    if (info === undefined) continue;
    expect(info.isSymbolicLink()).toBe(true);
    expect(path.isAbsolute(await readlink(file))).toBe(true);
  }
  for (const slot of [l.paths.blue, l.paths.green]) {
    const info = await lstat(slot).catch(() => undefined);
    if (info !== undefined) expect(info.mode & 0o777).toBe(0o755);
  }
}

/** Every record a judge writes is a terminal, schema-valid record of the operation. */
export function assertRecords(records: readonly Operation[]): void {
  for (const record of records) {
    expect(operationSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({ id: operationId, kind: 'agent-upgrade', phase: 'judged' });
    expect(['succeeded', 'failed', 'rolled-back']).toContain(record.state);
    expect(record.finishedAt).toBeDefined();
  }
}

/** A clock that starts at `start` and moves one second per reading. */
export function steppingClock(start = '2026-01-01T00:00:00.000Z'): () => Date {
  let next = Date.parse(start);
  return () => {
    const now = new Date(next);
    next += 1000;
    return now;
  };
}

/** What a fake stage host saw, in order. */
export interface StageHost {
  options: StageOptions;
  calls: string[];
  cleanups: number;
  /** Where last-good resolved when the candidate was written. */
  lastGoodAtInstall: string | undefined;
  /** The signal the fetch found: the candidate must be recorded before any download. */
  signalAtFetch: UpgradeSignal | undefined;
}

/** How the fake fetcher behaves: a release archive downloaded, then its member extracted. */
export interface FakeFetch {
  /** The version the candidate answers. */
  version?: string;
  /** The download fails with this message: nothing was fetched, so nothing is removed. */
  downloadFails?: string;
  /** The extraction fails with this message; the archive is removed all the same. */
  extractionFails?: string;
  /** Runs once the archive is downloaded, before it is extracted. */
  afterDownload?: () => void;
  /**
   * What the extracted candidate is, when not a release that serves this host:
   * one whose `version` fails, or one that predates the host root (no
   * capability, no `host-root` command that prints a path).
   */
  candidate?: 'fails' | 'predates-host-root';
}

/** The candidate a fake fetch extracts at `target`. */
async function fakeCandidate(
  target: string,
  version: string,
  kind: FakeFetch['candidate'],
): Promise<void> {
  if (kind === undefined) return agentScript(target, version);
  // Answers every command the same, so `host-root` prints no path.
  const old: VersionInfo = {
    version,
    commit: 'c0ffee',
    arch: 'amd64',
    node: '24',
    capabilities: [],
  };
  const script =
    kind === 'fails'
      ? '#!/bin/sh\necho "no such binary format" >&2\nexit 42\n'
      : `#!/bin/sh\necho '${JSON.stringify(old)}'\n`;
  await writeFileAtomic(target, script, { mode: 0o755 });
}

/** The port and clock for stageAndSwitch; `overrides` replace the default fakes. */
export function fakeStageHost(
  l: Layout,
  overrides: Partial<StageOptions> & FakeFetch = {},
): StageHost {
  const {
    version = 'v2',
    downloadFails,
    extractionFails,
    afterDownload,
    candidate,
    ...replacements
  } = overrides;
  const host: StageHost = {
    calls: [],
    cleanups: 0,
    lastGoodAtInstall: undefined,
    signalAtFetch: undefined,
    options: {
      paths: l.paths,
      hostRoot: l.hostRoot,
      signalFile: l.signalFile,
      operationId,
      redactedUrl: 'https://releases.example/aks-flex-node-v2-linux-amd64.tar.gz',
      log,
      clock: { wallClock: steppingClock() },
      port: {
        // As the daemon's fetcher does: download, report extracting, write the
        // member at the target, and remove the archive whatever happened.
        fetch: async (target) => {
          host.calls.push('fetchCandidate');
          host.signalAtFetch = await readSignal(l);
          if (downloadFails !== undefined) throw new Error(downloadFails);
          try {
            afterDownload?.();
            host.options.port.report('extracting');
            // The candidate is staged beside its slot under a temporary name.
            const name = path.basename(target);
            host.calls.push(
              `extract ${name.startsWith('.aks-flex-node-candidate-') ? 'staged' : name}`,
            );
            host.lastGoodAtInstall = await resolvedName(l, l.paths.lastGood);
            if (extractionFails !== undefined) throw new Error(extractionFails);
            await fakeCandidate(target, version, candidate);
          } finally {
            host.calls.push('cleanup');
            host.cleanups += 1;
          }
        },
        report: (phase) => host.calls.push(`phase ${phase}`),
      },
      ...replacements,
    },
  };
  return host;
}

/**
 * What the daemon runs under one hold of the activation lock: the pending
 * check, then the stage. Tests that meet a pending upgrade go through this.
 */
export async function upgradeUnderLock(options: StageOptions): Promise<StageResult> {
  await refusePendingUpgrade(options.signalFile);
  return stageAndSwitch(options);
}

/** What a fake judge host saw. */
export interface JudgeHost {
  records: Operation[];
  restarts: number;
  options: JudgeOptions;
}

/** Injected functions for judgeStartedUpgrade, for a daemon running `running`. */
export function fakeJudgeHost(
  l: Layout,
  running: string,
  instanceId: string,
  overrides: Partial<JudgeOptions> = {},
): JudgeHost {
  const host: JudgeHost = {
    records: [],
    restarts: 0,
    options: {
      paths: l.paths,
      signalFile: l.signalFile,
      instanceId,
      runningExecutable: running,
      log,
      recordResult: (operation) => {
        host.records.push(operation);
        return Promise.resolve();
      },
      scheduleRestart: () => {
        host.restarts += 1;
        return Promise.resolve();
      },
      now: () => new Date('2026-01-01T01:00:00.000Z'),
      ...overrides,
    },
  };
  return host;
}
