/**
 * Fixtures for the move's tests, as spec hostroot §5 names them
 * (moveOptions, fromLegacy, fromRoot, recordBlue, assertRestarting,
 * assertMoved, finish, assertStillLinked), over test-fixtures' legacyHost.
 */
import { readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  blueSlotFile,
  currentLinkFile,
  greenSlotFile,
  hostLayoutFiles,
  managedBinaryDir,
} from '@aks-flex-node/layout';
import { expect } from 'vitest';
import { hostRootState, type HostRootState } from '../host-root-state.js';
import { migrateHostRoot } from '../migrate-host-root.js';
import { assertArtifactsKept, kindAt, log, markers, type Layout } from '../test-fixtures.js';
import { recordDigest } from './digest-record.js';
import type { MoveHost } from './move-host.js';
import type { HostRootMovePaths } from './move-paths.js';
import { reconcileHostRootMove, type MoveOutcome } from './reconcile-move.js';
import type { MoveOptions } from './move-settings.js';

/** A legacy host's layout with the move's two files under `<tmp>/etc/aks-flex-node`. */
export interface MoveLayout extends Layout {
  readonly move: HostRootMovePaths;
}

export function withMovePaths(layout: Layout): MoveLayout {
  const etc = path.join(layout.tmp, 'etc/aks-flex-node');
  return Object.assign(layout, {
    move: {
      ...layout.paths,
      hostRootAgentDigests: path.join(etc, 'host-root-agents'),
      signalFile: path.join(etc, 'agent-upgrade-signal.json'),
    },
  });
}

/** What a fake callback saw when it was called. */
export interface Seen {
  root: string;
  state: HostRootState;
  /** The content reached through the legacy `current` link ("green" while it is intact). */
  legacyCurrent: string;
  rewritesBefore: number;
}

/** A {@link MoveHost} that records every call and fails where a test says. */
export interface FakeMoveHost extends MoveHost {
  exe: string;
  noexec: boolean;
  probeError: Error | undefined;
  verifyError: Error | undefined;
  rewriteError: Error | undefined;
  restartError: Error | undefined;
  readonly verifies: Seen[];
  readonly rewrites: Seen[];
  readonly relabels: string[];
  readonly probes: string[];
  restarts: number;
}

export function fakeMoveHost(layout: MoveLayout, exe: string): FakeMoveHost {
  const seen = async (root: string): Promise<Seen> => ({
    root,
    state: await hostRootState(layout.paths),
    legacyCurrent: await readFile(path.join(layout.legacy, currentLinkFile), 'utf8').catch(
      () => 'missing',
    ),
    rewritesBefore: fake.rewrites.length,
  });
  const fake: FakeMoveHost = {
    exe,
    noexec: false,
    probeError: undefined,
    verifyError: undefined,
    rewriteError: undefined,
    restartError: undefined,
    verifies: [],
    rewrites: [],
    relabels: [],
    probes: [],
    restarts: 0,
    executable: () => Promise.resolve(fake.exe),
    relabel: (root) => {
      fake.relabels.push(root);
      return Promise.resolve();
    },
    probeMount: (dir) => {
      fake.probes.push(dir);
      if (fake.probeError !== undefined) return Promise.reject(fake.probeError);
      return Promise.resolve({ noexec: fake.noexec, mountPoint: path.dirname(dir) });
    },
    verify: async (root) => {
      fake.verifies.push(await seen(root));
      if (fake.verifyError !== undefined) throw fake.verifyError;
    },
    rewriteUnits: async (root) => {
      fake.rewrites.push(await seen(root));
      if (fake.rewriteError !== undefined) throw fake.rewriteError;
    },
    queueRestart: () => {
      if (fake.restartError !== undefined) return Promise.reject(fake.restartError);
      fake.restarts += 1;
      return Promise.resolve();
    },
  };
  return fake;
}

export const fromLegacy = (l: Layout): string => path.join(l.legacy, greenSlotFile);
export const fromRoot = (l: Layout): string => path.join(l.root, greenSlotFile);

/** Records blue's digest as if it had run here: both slots are then known. */
export async function recordBlue(l: MoveLayout): Promise<void> {
  await recordDigest(l.move.hostRootAgentDigests, path.join(l.legacy, blueSlotFile));
}

export function runMove(
  l: MoveLayout,
  host: FakeMoveHost,
  options: MoveOptions = {},
): Promise<MoveOutcome> {
  return reconcileHostRootMove(l.move, log, host, options);
}

async function legacyLayoutPresent(l: Layout): Promise<boolean[]> {
  return Promise.all(
    hostLayoutFiles().map(async (rel) => (await kindAt(path.join(l.legacy, rel))) !== 'missing'),
  );
}

/** Pass 1 ended with the restart queued, and nothing under the legacy root was touched. */
export async function assertRestarting(
  l: MoveLayout,
  host: FakeMoveHost,
  outcome: MoveOutcome,
): Promise<void> {
  expect(outcome).toEqual({ kind: 'restart-queued' });
  expect(await hostRootState(l.paths)).toBe('moving');
  expect(host.restarts).toBeGreaterThanOrEqual(1);
  // The units were rewritten to the copy, while moving, before any legacy file went.
  expect(host.rewrites.at(-1)).toMatchObject({
    state: 'moving',
    legacyCurrent: 'green',
    root: await realpath(l.root),
  });
  // The copy was verified, while moving, before that rewrite.
  expect(host.verifies.at(-1)).toMatchObject({
    root: l.root,
    state: 'moving',
    rewritesBefore: host.rewrites.length - 1,
  });
  expect(await legacyLayoutPresent(l)).not.toContain(false);
  expect(await kindAt(l.move.hostRootAgentDigests)).toBe('file');
  expect(await kindAt(l.staging)).toBe('missing');
}

/** The host is moved: installed, nothing of the layout left under the legacy root. */
async function assertMoved(l: MoveLayout): Promise<void> {
  expect(await hostRootState(l.paths)).toBe('installed');
  expect(await legacyLayoutPresent(l)).not.toContain(true);
  expect(await kindAt(path.join(l.legacy, managedBinaryDir))).toBe('missing');
  expect(await readFile(path.join(l.legacy, 'bin/other-tool'), 'utf8')).toBe('other');
  expect(await kindAt(path.join(l.legacy, 'bin'))).toBe('directory');
  expect(await kindAt(l.move.hostRootAgentDigests)).toBe('missing');
  expect(await kindAt(path.join(l.root, '.moving'))).toBe('missing');
  expect(await realpath(path.join(l.root, currentLinkFile))).toBe(
    path.join(await realpath(l.root), greenSlotFile),
  );
  if (l.artifactsStaged) await assertArtifactsKept(l);
  await migrateHostRoot(l.paths, log, markers);
  expect(await hostRootState(l.paths)).toBe('installed');
}

/** Pass 2, as the restarted daemon running from the copy: no restart, the host moved. */
export async function finish(l: MoveLayout, host: FakeMoveHost): Promise<void> {
  const restarts = host.restarts;
  const verifies = host.verifies.length;
  host.exe = fromRoot(l);
  await migrateHostRoot(l.paths, log, markers);
  expect(await runMove(l, host)).toEqual({ kind: 'moved' });
  expect(host.restarts).toBe(restarts);
  expect(host.verifies.length).toBe(verifies);
  await assertMoved(l);
}

/** The host is linked as before: every legacy file, the record, no copy anywhere. */
export async function assertStillLinked(l: MoveLayout): Promise<void> {
  expect(await hostRootState(l.paths)).toBe('linked');
  expect(await readlink(l.root)).toBe(l.legacy);
  expect(await legacyLayoutPresent(l)).not.toContain(false);
  expect(await readFile(path.join(l.legacy, currentLinkFile), 'utf8')).toBe('green');
  expect(await kindAt(l.staging)).toBe('missing');
  if (l.artifactsStaged) await assertArtifactsKept(l);
}
