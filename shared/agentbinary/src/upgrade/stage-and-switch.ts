import { randomBytes } from 'node:crypto';
import { readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { VersionInfo } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { replaceSymlinkAtomic, syncDirectory } from '@aks-flex-node/fs';
import type { HostRootPaths } from '@aks-flex-node/hostroot';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { Host } from '../host.js';
import {
  candidateSlotFor,
  isTemporarySlotName,
  temporaryNames,
  type AgentBinaryPaths,
} from '../agent-binary-paths.js';
import { ensureAgentBinaryLayout } from '../ensure-layout.js';
import { resolveIfPresent } from '../resolve-link.js';
import { findActiveMachine, isNspawnMachine, syncNspawnCopy } from '../nspawn/nspawn-copy.js';
import { inspectCandidate } from './inspect-candidate.js';
import { rollbackUpgradeFiles } from './rollback-files.js';
import {
  clearUpgradeSignal,
  daemonInstanceId,
  readUpgradeSignal,
  updateUpgradeSignal,
  writeUpgradeSignal,
} from './upgrade-state.js';

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
