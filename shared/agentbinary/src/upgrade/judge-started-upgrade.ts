import type { Operation, UpgradeSignal } from '@aks-flex-node/api';
import { failpoint, failpoints } from '@aks-flex-node/failpoints';
import { repairForWrite } from '@aks-flex-node/fs';
import { AgentError, isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import { isSlot, type AgentBinaryPaths } from '../agent-binary-paths.js';
import { resolveIfPresent } from '../resolve-link.js';
import { isNspawnMachine, nspawnCopyMatches, nspawnCopyPath } from '../nspawn/nspawn-copy.js';
import { rollbackUpgradeFiles, type RollbackResult } from './stage-and-switch.js';
import {
  clearUpgradeSignal,
  describeSetAside,
  settleUpgradeState,
  upgradeStateOf,
  writeUpgradeSignal,
  type UpgradeState,
} from './upgrade-state.js';

/** What {@link judgeStartedUpgrade} needs. */
export interface JudgeOptions {
  paths: AgentBinaryPaths;
  signalFile: string;
  /** This daemon's instance id; it never judges a signal it wrote itself. */
  instanceId: string;
  /** The resolved executable this process runs. */
  runningExecutable: string;
  log: Logger;
  recordResult: (operation: Operation) => Promise<void>;
  /** Asks systemd to restart the agent (into last-good after a rollback). */
  scheduleRestart: () => Promise<void>;
  now: () => Date;
  /**
   * What this daemon's start could not refresh from the candidate (the nspawn
   * lifecycle helper): an upgrade that leaves the machines a stale helper has
   * not succeeded, so it fails the judgement and rolls back.
   */
  startupFailure?: string | undefined;
  /**
   * Told, in a sentence for `status`, what became of a corrupt signal: set
   * aside here, or (rebuilt by the guard or recovery) the judgement of the
   * binary it left current.
   */
  onNote?: (note: string) => void;
}

/** How a start judged the signal it found. */
export type JudgeOutcome =
  'no-signal' | 'own-signal' | 'succeeded' | 'failed' | 'rolled-back' | 'restart-scheduled';

/**
 * Judges a pending AgentUpgrade at daemon start, after the stability
 * interval: the started binary must be the candidate `current` names. A
 * success is recorded and the signal cleared. A failure is recorded on the
 * signal first (so a crash here is retried), the files are rolled back, and
 * a process that is not last-good schedules a restart into it and keeps the
 * signal: the last-good process that starts next finishes the record.
 */
export async function judgeStartedUpgrade(options: JudgeOptions): Promise<JudgeOutcome> {
  // A corrupt signal is set aside here, under the lock, and what the links
  // say takes its place: judging must never wait on a file no release wrote.
  const state = await settleUpgradeState({
    ...options,
    onSetAside: (setAside) => options.onNote?.(describeSetAside(setAside)),
  });
  switch (state.kind) {
    case 'none':
      return 'no-signal';
    case 'failed':
      return finishFailed(options, state);
    case 'recorded':
    case 'staged':
    case 'switched':
    case 'committed':
      if (state.signal.initiatingDaemonInstance === options.instanceId) return 'own-signal';
      return judgeUnfailed(options, state);
    default: {
      const unknown: never = state;
      throw new Error(`unknown upgrade state ${JSON.stringify(unknown)}`);
    }
  }
}

type FailedState = Extract<UpgradeState, { kind: 'failed' }>;
type UnfailedState = Exclude<UpgradeState, { kind: 'none' } | FailedState>;

/** Records a start that proved the candidate, or the failure it found and what follows from it. */
async function judgeUnfailed(options: JudgeOptions, state: UnfailedState): Promise<JudgeOutcome> {
  const { log, paths, signalFile } = options;
  const { signal } = state;
  const problem = await findStartProblem(options, state);
  if (problem === undefined) {
    await options.recordResult(
      resultFrom(signal, 'succeeded', successMessage(signal), options.now()),
    );
    failpoint(failpoints.judgeResultWritten);
    await clearUpgradeSignal(signalFile);
    if (signal.corruptSignal !== undefined) options.onNote?.(successMessage(signal));
    log.info(
      { operation: signal.operationName, version: signal.candidateVersion },
      'AgentUpgrade completed',
    );
    return 'succeeded';
  }
  const isCandidateActive =
    state.kind === 'switched' || (state.kind === 'committed' && state.isCandidateCurrent);
  const failed = { ...signal, failure: problem, recoveryRequired: isCandidateActive };
  // Recorded before the files change, so a crash from here on is retried as a failure.
  await writeUpgradeSignal(signalFile, failed);
  failpoint(failpoints.judgeFailureRecorded);
  log.warn(
    { operation: signal.operationName, failure: problem },
    'the upgraded daemon did not start as expected',
  );
  const recorded = await upgradeStateOf(paths, failed);
  if (recorded.kind !== 'failed') throw new Error(`a recorded failure reads as ${recorded.kind}`);
  return finishFailed(options, recorded);
}

/**
 * Rolls a failed upgrade back and records its result. A process that is not
 * last-good while the host must run last-good schedules a restart into it and
 * keeps the signal: the last-good process that starts next finishes the record.
 */
async function finishFailed(options: JudgeOptions, state: FailedState): Promise<JudgeOutcome> {
  const { log, paths, signalFile } = options;
  const { signal } = state;
  const rollback = await rollBackOrExplain(paths, signal, log);
  const lastGood = await resolveIfPresent(paths.lastGood);
  if (state.mustRunLastGood && options.runningExecutable !== lastGood) {
    // The terminal record waits until last-good runs: only then is the host
    // known to have a working agent again.
    await options.scheduleRestart();
    log.warn({ operation: signal.operationName, lastGood }, 'restarting into the last-good binary');
    return 'restart-scheduled';
  }
  const result = rollback.rolledBack ? 'rolled-back' : 'failed';
  // A copy the rollback could not write does not hold the record or the
  // signal: the host runs last-good, and the daemon's machine-copy keeper
  // retries the copy and shows it in status.
  const copyNote =
    rollback.machineCopy === undefined
      ? ''
      : `; the machine ${rollback.machineCopy.machine}'s copy of the agent was not restored (${rollback.machineCopy.error.message}), the daemon retries it`;
  await options.recordResult(
    resultFrom(signal, result, `${state.failure}${copyNote}`, options.now()),
  );
  failpoint(failpoints.judgeResultWritten);
  await clearUpgradeSignal(signalFile);
  if (signal.corruptSignal !== undefined) {
    options.onNote?.(
      `a corrupt AgentUpgrade signal was set aside (${signal.corruptSignal}); ${signal.candidatePath ?? 'the current binary'} failed its judgement and ${result === 'rolled-back' ? 'last-good was restored' : 'was recorded as failed'}`,
    );
  }
  log.warn(
    { operation: signal.operationName, state: result, failure: state.failure },
    'AgentUpgrade failed',
  );
  return result;
}

/**
 * The rollback, or an error that says it could not finish and what repairs
 * it. The signal stays (with the failure recorded), so the caller's retry,
 * the recovery unit or `recover-agent-upgrade` finishes it once the cause is
 * gone; meanwhile the daemon serves reads and says this in status.
 */
async function rollBackOrExplain(
  paths: AgentBinaryPaths,
  signal: UpgradeSignal,
  log: Logger,
): Promise<RollbackResult> {
  try {
    return await rollbackUpgradeFiles(paths, signal, log);
  } catch (error) {
    const target = isAgentError(error) && error.path !== undefined ? error.path : paths.current;
    throw new AgentError(
      'UPGRADE_FAILED',
      `the rollback of AgentUpgrade ${signal.operationName} to last-good could not finish: ${messageOf(error)}`,
      {
        path: target,
        cause: error,
        hint: `${isAgentError(error) && error.hint !== undefined ? error.hint : repairForWrite(target, error)}; the daemon retries by itself, and \`aks-flex-node recover-agent-upgrade --message TEXT\` restores last-good once it can`,
      },
    );
  }
}

function successMessage(signal: UpgradeSignal): string {
  if (signal.corruptSignal === undefined) return 'AgentUpgrade completed';
  return `kept ${signal.candidatePath ?? 'the current binary'}: it started and stayed up after a corrupt signal was set aside (${signal.corruptSignal})`;
}

async function findStartProblem(
  options: JudgeOptions,
  state: UnfailedState,
): Promise<string | undefined> {
  const { paths } = options;
  switch (state.kind) {
    case 'recorded':
      return 'interrupted before selecting a candidate slot';
    case 'staged':
      return 'interrupted before switching the candidate binary';
    case 'committed':
      if (!state.isCandidateCurrent) {
        return isSlot(paths, state.candidate)
          ? 'interrupted before switching the candidate binary'
          : 'interrupted before selecting a candidate slot';
      }
      return findRunProblem(options, state.candidate ?? '', state.signal);
    case 'switched':
      return findRunProblem(options, state.candidate, state.signal);
    default: {
      const unknown: never = state;
      throw new Error(`unknown upgrade state ${JSON.stringify(unknown)}`);
    }
  }
}

/** What is wrong with this start of a candidate `current` names, or undefined. */
async function findRunProblem(
  options: JudgeOptions,
  candidate: string,
  signal: UpgradeSignal,
): Promise<string | undefined> {
  const { paths } = options;
  if (options.runningExecutable !== candidate) {
    return `the daemon started from ${options.runningExecutable}, not the candidate ${candidate}`;
  }
  // Spec agentbinary 3.7 step 3: the machine's copy (the kubelet's
  // exec-credential helper) must be the upgraded binary too. A host without
  // the machine's root filesystem has no copy to compare. (The running
  // executable is current here: both are the candidate.)
  const running = options.runningExecutable;
  if (
    isNspawnMachine(signal.activeMachine) &&
    (await nspawnCopyMatches(paths.machinesDir, signal.activeMachine, running)) === false
  ) {
    return `upgraded host and nspawn agent binaries do not match: ${nspawnCopyPath(paths.machinesDir, signal.activeMachine)} differs from ${running}`;
  }
  return options.startupFailure;
}

/**
 * The operation record a signal's upgrade ends with: the judgement's, and a
 * reset's when it ends an upgrade whose layout is already on a judged binary.
 */
export function resultFrom(
  signal: UpgradeSignal,
  state: Operation['state'],
  message: string,
  now: Date,
): Operation {
  const operation: Operation = {
    id: signal.operationName,
    kind: 'agent-upgrade',
    state,
    phase: 'judged',
    message,
    startedAt: signal.startedAt ?? now.toISOString(),
    finishedAt: now.toISOString(),
  };
  if (signal.sourceUrl !== undefined) operation.sourceUrl = signal.sourceUrl;
  if (signal.previousPath !== undefined) operation.fromPath = signal.previousPath;
  if (signal.candidatePath !== undefined) operation.toPath = signal.candidatePath;
  if (signal.candidateVersion !== undefined) operation.toVersion = signal.candidateVersion;
  if (signal.switchedAt !== undefined) operation.switchedAt = signal.switchedAt;
  return operation;
}
