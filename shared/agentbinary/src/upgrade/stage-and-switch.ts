/**
 * The switch, with its inspection and its undo: stages a candidate beside
 * the inactive slot, runs it and refuses one that cannot serve this host
 * root, and switches `current` to it; and the rollback that points `current`
 * back at last-good when the switch may have happened, which a failed stage
 * runs here and the judgement and recovery after a restart run again.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { versionInfoSchema, type UpgradeSignal, type VersionInfo } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { checkBinaryRuns, replaceSymlinkAtomic, syncDirectory } from '@aks-flex-node/fs';
import { hostRootState, type HostRootPaths } from '@aks-flex-node/hostroot';
import { AgentError, isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { Host } from '../host.js';
import {
  candidateSlotFor,
  isTemporarySlotName,
  temporaryNames,
  type AgentBinaryPaths,
} from '../agent-binary-paths.js';
import { ensureAgentBinaryLayout } from '../ensure-layout.js';
import { resolveIfPresent } from '../resolve-link.js';
import {
  findActiveMachine,
  isNspawnMachine,
  syncNspawnCopy,
  type NspawnMachine,
} from '../nspawn/nspawn-copy.js';
import {
  clearUpgradeSignal,
  daemonInstanceId,
  mayHaveSwitched,
  readUpgradeSignal,
  updateUpgradeSignal,
  upgradeStateOf,
  writeUpgradeSignal,
} from './upgrade-state.js';

// The switch.

// Candidates staged beside their slot, and the archive library's partial
// members: one left by a crash is removed by the next upgrade (and at start).
const { stagedCandidatePrefix } = temporaryNames;

/**
 * Removes what a killed upgrade left in the slot directory. Only files with
 * the upgrade's own temporary names are touched, under the activation lock.
 */
async function removeStaleCandidates(slotDir: string, log: Logger): Promise<void> {
  for (const name of await readdir(slotDir)) {
    if (!isTemporarySlotName(name)) continue;
    await rm(path.join(slotDir, name), { force: true });
    log.info(
      { path: path.join(slotDir, name) },
      'removed a candidate a stopped upgrade left behind',
    );
  }
}

/**
 * The steps an upgrade reports as its phase. `extracting` is the fetcher's:
 * only it knows when a download ends and the binary is being written.
 */
export type StagePhase = 'recording' | 'downloading' | 'extracting' | 'verifying' | 'switching';

/**
 * The caller's side of an upgrade: the only code {@link stageAndSwitch} calls
 * back into. Everything else it is given is data, the logger, the clock and
 * the cancel signal.
 */
export interface StagePort {
  /**
   * Makes the candidate binary a local file at `target` (the staged name beside
   * its slot), atomically, and removes whatever it fetched on the way (a
   * downloaded archive). Called once, after the signal records the upgrade.
   * The one place the kinds of source differ; it reports `extracting` itself.
   */
  fetch(target: string): Promise<void>;
  /** The upgrade entered `phase` (the operation shows it). */
  report(phase: StagePhase): void;
}

/** What {@link stageAndSwitch} needs. */
export interface StageOptions {
  paths: AgentBinaryPaths;
  /** The host root the staged candidate must be able to serve ({@link inspectCandidate}). */
  hostRoot: HostRootPaths;
  signalFile: string;
  operationId: string;
  /** The source URL without query or fragment; it goes into the signal and the logs. */
  redactedUrl: string;
  log: Logger;
  /** The wall clock the signal's times are read from: the host's. */
  clock: Pick<Host, 'wallClock'>;
  port: StagePort;
  /**
   * Cancels the upgrade until the switch begins; the download stops at once,
   * any other step at its end. A cancelled upgrade leaves the layout as it was.
   */
  signal?: AbortSignal | undefined;
}

/** What a successful switch leaves behind. */
export interface StageResult {
  previous: string;
  candidate: string;
  candidateVersion: VersionInfo;
}

/**
 * Stages the candidate binary beside the inactive slot and switches `current`
 * to it, under the caller's activation lock. The caller has already refused
 * an upgrade the host must not take (a pending one, an unfinished move, a
 * legacy seed) under the same hold of the lock. Every step is durable before
 * the next, and a failpoint sits between each pair, so a kill at any point
 * leaves a state the next daemon start judges: either the candidate is
 * current and committed, or last-good is current.
 *
 * On any failure it rolls the files back (only if the switch happened),
 * clears the signal and rethrows: the old daemon keeps running.
 */
export async function stageAndSwitch(options: StageOptions): Promise<StageResult> {
  const { log, paths, signalFile } = options;
  await recordPending(options);
  try {
    return await stageAfterRecording(options);
  } catch (error) {
    await abortUpgrade(paths, signalFile, log, error);
    throw error;
  }
}

/**
 * The signal is written first, before anything changes: if this process dies
 * anywhere later, the next start finds it and judges what happened.
 */
async function recordPending(options: StageOptions): Promise<void> {
  options.port.report('recording');
  // activeMachine as the Go releases record it: a Go daemon started as the
  // candidate (or as last-good) judges and recovers only a signal naming it.
  const running = await resolveIfPresent(options.paths.current);
  const activeMachine =
    running === undefined ? undefined : await findActiveMachine(options.paths.machinesDir, running);
  await writeUpgradeSignal(options.signalFile, {
    operationName: options.operationId,
    ...(activeMachine === undefined ? {} : { activeMachine }),
    initiatingDaemonInstance: daemonInstanceId,
    sourceUrl: options.redactedUrl,
    startedAt: options.clock.wallClock().toISOString(),
  });
  failpoint(failpoints.upgradeSignalWritten);
}

async function stageAfterRecording(options: StageOptions): Promise<StageResult> {
  const { log, paths, signalFile } = options;
  await ensureAgentBinaryLayout(paths, log);
  const previous = await resolveIfPresent(paths.current);
  if (previous === undefined) {
    throw new AgentError(
      'UPGRADE_FAILED',
      `resolve current agent binary ${paths.current}: missing`,
      { path: paths.current },
    );
  }
  const candidate = candidateSlotFor(paths, previous);
  await updateUpgradeSignal(signalFile, { candidatePath: candidate, previousPath: previous });
  failpoint(failpoints.upgradeCandidateRecorded);

  await removeStaleCandidates(path.dirname(candidate), log);
  options.port.report('downloading');
  // The candidate is staged beside the slot and proven before it replaces
  // anything: a refused archive or candidate leaves slots and links as they were.
  const staged = path.join(
    path.dirname(candidate),
    `${stagedCandidatePrefix}${randomBytes(6).toString('hex')}`,
  );
  let candidateVersion: VersionInfo;
  try {
    await options.port.fetch(staged);
    options.port.report('verifying');
    // Run and refused here, before it replaces anything: one that cannot serve
    // this host would only fail and roll back after the restart.
    candidateVersion = await inspectCandidate(staged, options.hostRoot);
  } catch (error) {
    await rm(staged, { force: true });
    throw error;
  }
  failpoint(failpoints.upgradeCandidateStaged);
  // The point of no return for a cancel: it is checked and the phase moves on
  // in one synchronous step, so a cancel either stops the upgrade here, with
  // nothing outside the staged file changed yet, or is refused as too late.
  if (options.signal?.aborted === true) {
    await rm(staged, { force: true });
    options.signal.throwIfAborted();
  }
  options.port.report('switching');
  // last-good moves to the running binary now: after the candidate proved it
  // runs (a refused one leaves a distinct last-good alone), and before the
  // slot last-good may name is replaced (the last-good binary is never the one
  // overwritten).
  await replaceSymlinkAtomic(paths.lastGood, previous);
  failpoint(failpoints.upgradeLastGoodUpdated);
  await rename(staged, candidate);
  await syncDirectory(path.dirname(candidate));
  failpoint(failpoints.upgradeCandidateInstalled);
  await replaceSymlinkAtomic(paths.current, candidate);
  failpoint(failpoints.upgradeSwitched);
  await updateUpgradeSignal(signalFile, {
    switchCommitted: true,
    switchedAt: options.clock.wallClock().toISOString(),
    candidateVersion: candidateVersion.version,
  });
  failpoint(failpoints.upgradeSwitchCommitted);
  // The machine's copy follows current, as a Go daemon expects when it judges.
  const { activeMachine } = (await readUpgradeSignal(signalFile)) ?? {};
  if (isNspawnMachine(activeMachine)) {
    await syncNspawnCopy(paths.machinesDir, activeMachine, candidate, log);
  }
  log.info(
    { previous, candidate, version: candidateVersion.version, source: options.redactedUrl },
    'switched to the upgraded agent binary',
  );
  return { previous, candidate, candidateVersion };
}

/**
 * Undoes a failed upgrade: files back (only if the switch happened), then the
 * signal goes. If the rollback itself fails the signal stays, so the next
 * start (or the recovery unit) retries it.
 */
async function abortUpgrade(
  paths: AgentBinaryPaths,
  signalFile: string,
  log: Logger,
  cause: unknown,
): Promise<void> {
  try {
    const signal = await readUpgradeSignal(signalFile);
    await rollbackUpgradeFiles(paths, signal, log);
    await clearUpgradeSignal(signalFile);
    log.warn(
      { err: cause },
      'AgentUpgrade failed before the restart; the running agent is unchanged',
    );
  } catch (rollbackError) {
    log.error(
      { err: rollbackError, cause: messageOf(cause) },
      'AgentUpgrade failed and its rollback failed too; the signal is kept so the next start retries',
    );
  }
}

// The inspection: the candidate runs, and it can serve this host root.

const versionTimeoutMs = 30_000;

/**
 * Runs the installed candidate and refuses one that cannot serve this host.
 * A release that predates the host root cannot find its files on a host
 * whose root is a real directory: it would only fail and roll back later, so
 * it is refused before the switch. On a linked host such a release still
 * finds its files under the legacy root and is accepted.
 */
export async function inspectCandidate(slot: string, paths: HostRootPaths): Promise<VersionInfo> {
  const info = await readVersionInfo(slot);
  const state = await hostRootState(paths);
  const needsHostRoot = state === 'installed' || state === 'moving';
  if (needsHostRoot && !(await knowsHostRoot(slot, info, paths.root))) {
    const what =
      info.version === olderRelease
        ? 'has no `host-root` command that prints one path'
        : `${info.version} has no \`host-root\` command that prints one path, nor the host-root capability`;
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the candidate ${what}, so it predates the host root and cannot find its files under ${paths.root}`,
      {
        path: slot,
        hint: 'upgrade to a release that supports the host root; to go back to an older release, reset and reinstall it',
      },
    );
  }
  return info;
}

const olderRelease = 'unknown (a release without version --json)';

/**
 * Whether a candidate knows the host root, decided as the Go releases decide
 * it (spec daemon 7.1): its `host-root` command exists and prints one bare
 * absolute path on one line. Go releases that know the host root have that
 * command but no `version --json`, so the capability this product announces
 * is only a shortcut, never required.
 */
async function knowsHostRoot(slot: string, info: VersionInfo, root: string): Promise<boolean> {
  if (info.capabilities.includes('host-root')) return true;
  let output: string;
  try {
    output = await checkBinaryRuns(slot, { args: ['host-root'], timeoutMs: versionTimeoutMs });
  } catch {
    // A release without the command fails it: it predates the host root.
    return false;
  }
  if (!isOneBarePath(output)) return false;
  // As the Go guard compares it: a release that would look elsewhere cannot serve this host.
  const used = output.trim();
  if (used !== root) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the candidate uses the host root ${used}, but this host uses ${root}`,
      { path: slot, hint: 'upgrade to a release built for this host root' },
    );
  }
  return true;
}

/** One absolute path and its newline, nothing else: what the Go guard compares. */
export function isOneBarePath(output: string): boolean {
  const lines = output.split('\n');
  const [first] = lines;
  return (
    lines.length === 2 &&
    lines[1] === '' &&
    first !== undefined &&
    first.startsWith('/') &&
    first.trim() === first &&
    !first.includes('\0')
  );
}

async function readVersionInfo(slot: string): Promise<VersionInfo> {
  try {
    const output = await checkBinaryRuns(slot, {
      args: ['version', '--json'],
      timeoutMs: versionTimeoutMs,
    });
    const parsed = versionInfoSchema.safeParse(parseLastLine(output));
    if (parsed.success) return parsed.data;
  } catch {
    // An older release rejects the flag; whether it runs at all is checked below.
  }
  await checkBinaryRuns(slot, { args: ['version'], timeoutMs: versionTimeoutMs }).catch(
    (error: unknown) => {
      throw new AgentError(
        'UPGRADE_REFUSED',
        `the candidate ${slot} does not run: \`version\` failed`,
        {
          path: slot,
          cause: error,
          hint: 'check that the archive is an aks-flex-node release for this architecture',
        },
      );
    },
  );
  return { version: olderRelease, commit: '', arch: process.arch, node: '', capabilities: [] };
}

function parseLastLine(output: string): unknown {
  try {
    return JSON.parse(output.trim().split('\n').at(-1) ?? '');
  } catch {
    return undefined;
  }
}

// The undo: `current` back at last-good when the switch may have happened.

/** A machine's copy of the agent that could not be made equal to `current`. */
export interface MachineCopyFailure {
  machine: NspawnMachine;
  /** Why, with the path and the repair (`hint`). */
  error: AgentError;
}

/** What a rollback did. */
export interface RollbackResult {
  rolledBack: boolean;
  /** Where `current` resolves afterwards. */
  current: string | undefined;
  /** Set when the links were restored but the active machine's copy was not. */
  machineCopy?: MachineCopyFailure;
}

/**
 * Points `current` back at last-good when the signal's state shows the
 * switch may have happened ({@link mayHaveSwitched}: switched, committed, or
 * failed after a possible switch). Otherwise it does nothing: a host whose
 * switch never happened is never downgraded. Idempotent; the caller keeps the signal
 * until it succeeded, so a failed rollback is retried.
 *
 * Throws UPGRADE_FAILED when last-good cannot be resolved.
 */
export async function rollbackUpgradeFiles(
  paths: AgentBinaryPaths,
  signal: UpgradeSignal | undefined,
  log: Logger,
): Promise<RollbackResult> {
  const current = await resolveIfPresent(paths.current);
  const state = await upgradeStateOf(paths, signal);
  if (state.kind === 'none' || !mayHaveSwitched(state)) return { rolledBack: false, current };
  const { activeMachine } = state.signal;
  const lastGood = await resolveIfPresent(paths.lastGood);
  if (lastGood === undefined) {
    throw new AgentError(
      'UPGRADE_FAILED',
      `resolve last-good agent binary ${paths.lastGood}: it is missing or dangling`,
      {
        path: paths.lastGood,
        hint: 'reinstall the agent with `aks-flex-node start` from a known-good release',
      },
    );
  }
  if (current !== lastGood) {
    await replaceSymlinkAtomic(paths.current, lastGood);
    log.info({ current: lastGood, from: current }, 'pointed current back at the last-good binary');
  }
  failpoint(failpoints.rollbackCurrentRestored);
  if (!isNspawnMachine(activeMachine)) return { rolledBack: true, current: lastGood };
  // The links are the agent, and they are restored: a copy that cannot be
  // written (a read-only mount, an immutable file) is reported beside the
  // result, never a rollback undone or failed, so the node runs last-good
  // and takes changes while the copy is repaired and retried.
  try {
    await syncNspawnCopy(paths.machinesDir, activeMachine, lastGood, log);
    return { rolledBack: true, current: lastGood };
  } catch (error) {
    const failure = toAgentError(error);
    log.error(
      { err: failure, machine: activeMachine },
      "rolled back to last-good, but the machine's copy of the agent still differs from it",
    );
    return {
      rolledBack: true,
      current: lastGood,
      machineCopy: { machine: activeMachine, error: failure },
    };
  }
}

function toAgentError(error: unknown): AgentError {
  return isAgentError(error)
    ? error
    : new AgentError('HOST_ROOT_IO', messageOf(error), { cause: error });
}
