import {
  agentBinaryPathsUnder,
  readUpgradeSignal,
  readUpgradeState,
  type ReadUpgradeState,
} from '@aks-flex-node/agentbinary';
import {
  isHostRootMoveUnfinished,
  isLegacyReleased,
  reconcileHostRootMove,
  removeLegacySeed,
  resolveHostRoot,
  type MoveHost,
  type MoveOutcome,
} from '@aks-flex-node/hostroot';
import type { HostPaths } from '@aks-flex-node/layout';
import { isAgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { MutationQueue } from '../mutation-queue.js';
import type { StartupGate } from './startup-gate.js';

/** How long a daemon holding its gate shut waits to be replaced before it exits (spec daemon §3.3). */
export const holdForReplacementMs = 120_000;
/** How long to wait before judging the AgentUpgrade again after a failed judgement or signal read; each failure doubles it. */
export const judgeRetryMs = 10_000;
/** The longest wait between two judgements: a cause removed is noticed within it. */
export const judgeRetryMaxMs = 300_000;

/** What {@link runStartSequence} needs. */
export interface StartSequenceDeps {
  paths: HostPaths;
  log: Logger;
  gate: StartupGate;
  /**
   * Judges a pending AgentUpgrade (publishes, rolls back, clears the signal).
   * Given the stop signal: its wait for a busy lock must end when the daemon
   * stops, since the shutdown waits for this sequence.
   */
  judge: (stopped: AbortSignal, onNote: (note: string) => void) => Promise<unknown>;
  queue: Pick<MutationQueue, 'run'>;
  moveHost: MoveHost;
  /** The host root as resolved when the daemon prepared the host: the root its paths name. */
  startupRoot: string;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  holdMs?: number;
  retryMs?: number;
  retryMaxMs?: number;
  /** Milliseconds until the restart this daemon queued fires: a spaced restart extends the hold past it. */
  restartDelayMs?: () => number;
  /**
   * Starts keeping the active machine's copy of the agent equal to current
   * (in the background, retried while it cannot be written); called once no
   * upgrade is pending, so a copy a rollback could not restore converges.
   */
  keepMachineCopy?: () => void;
}

/**
 * The daemon's start after it has stayed up the stability interval (spec
 * daemon §2.2): judge a pending AgentUpgrade, then the host-root move under
 * the activation lock, then the legacy seed, then open the gate or hold it
 * shut. Resolves with the reason to exit non-zero when it held and was not
 * replaced within {@link holdForReplacementMs}; undefined otherwise (open,
 * held without a deadline, or stopped).
 */
export async function runStartSequence(
  deps: StartSequenceDeps,
  stopped: AbortSignal,
): Promise<string | undefined> {
  const { paths, log, gate } = deps;
  // What became of a corrupt signal at this start, for `status` once the gate opens.
  let judgeNote: string | undefined;
  const pending = await judgeUntilSettled(deps, stopped, (note) => {
    judgeNote = note;
  });
  // Judging can wait up to a minute for the lock; a daemon stopped meanwhile
  // (a reset stops it, then sweeps) must not go on to move files afterwards.
  if (pending === undefined || stopped.aborted) return undefined;
  if (pending) {
    // Recovery queued a restart into last-good, which takes the retained signal.
    gate.hold(
      'an AgentUpgrade is still pending: a restart into the last-good binary was queued to finish it',
      'wait for the agent to restart; `aks-flex-node status` shows the daemon that takes changes',
    );
    log.warn('not taking work: the AgentUpgrade signal is kept for the daemon that starts next');
    return undefined;
  }
  const outcome = await moveUnderLock(deps);
  gate.noteMove(outcome.kind);
  const seedRemoved = await removeReleasedSeed(paths, log);
  if (outcome.kind === 'moved' || seedRemoved) await releaseLegacyRoot(deps);
  // After the move, which must find the lock free; never waited on: a copy
  // that cannot be written must not keep the gate shut.
  deps.keepMachineCopy?.();
  const hold = await holdReason(deps, outcome);
  if (hold === undefined) {
    const moveNote =
      outcome.kind === 'not-ready' || outcome.kind === 'skipped-noexec'
        ? outcome.reason
        : undefined;
    const notes = [judgeNote, moveNote].filter((note) => note !== undefined);
    gate.open(notes.length === 0 ? undefined : notes.join('; '));
    log.info({ move: outcome.kind }, 'the daemon takes changes');
    return undefined;
  }
  return holdAndExit(deps, hold, stopped);
}

/** Tells `status` what the judgement is about to do, from the upgrade's state as it is now. */
async function describeJudgement(deps: StartSequenceDeps): Promise<void> {
  const { gate, paths } = deps;
  try {
    const layout = agentBinaryPathsUnder(deps.startupRoot, paths.machinesDir);
    gate.starting(judgementNote(await readUpgradeState(layout, paths.signalFile)));
  } catch (error) {
    gate.starting(`it cannot read the AgentUpgrade signal: ${messageOf(error)}`);
  }
}

/** What `status` says the judgement of this state does. */
export function judgementNote(state: ReadUpgradeState): string {
  switch (state.kind) {
    case 'none':
      return 'no AgentUpgrade is pending; it finishes the host-root move, if one is due';
    case 'corrupt':
      return `the AgentUpgrade signal is corrupt (${state.reason}); it sets it aside`;
    case 'recorded':
    case 'staged':
      return `it judges the pending AgentUpgrade ${state.signal.operationName}, interrupted before the switch`;
    case 'switched':
    case 'committed':
      return `it judges the pending AgentUpgrade ${state.signal.operationName}`;
    case 'failed':
      return `it finishes the failed AgentUpgrade ${state.signal.operationName} (${state.failure}) and records its result`;
    default: {
      const unknown: never = state;
      throw new Error(`unknown upgrade state ${JSON.stringify(unknown)}`);
    }
  }
}

/** Whether the signal is still pending after the judgement; undefined when stopped first. */
async function judgeUntilSettled(
  deps: StartSequenceDeps,
  stopped: AbortSignal,
  onNote: (note: string) => void,
): Promise<boolean | undefined> {
  let waitMs = deps.retryMs ?? judgeRetryMs;
  // Once, before the first attempt: a retry's explanation stays in status until the next one.
  await describeJudgement(deps);
  while (!stopped.aborted) {
    try {
      const outcome = await deps.judge(stopped, onNote);
      deps.log.info({ outcome }, 'judged the pending AgentUpgrade');
      return (await readUpgradeSignal(deps.paths.signalFile)) !== undefined;
    } catch (error) {
      // Stopped while it waited for the lock: the next daemon judges, nothing to retry.
      if (isAborted(stopped)) return undefined;
      // The gate stays shut meanwhile: nothing may change the layout before
      // the result is reported. Status says what failed and what repairs it;
      // the wait grows, so a cause that stays (a read-only mount) costs little.
      explainRetry(deps, error, waitMs);
      try {
        await deps.sleep(waitMs, stopped);
      } catch {
        return undefined;
      }
      waitMs = Math.min(waitMs * 2, deps.retryMaxMs ?? judgeRetryMaxMs);
    }
  }
  return undefined;
}

function explainRetry(deps: StartSequenceDeps, error: unknown, waitMs: number): void {
  const retry = `retrying in ${Math.round(waitMs / 1000)}s`;
  const hint = isAgentError(error) && error.hint !== undefined ? error.hint : undefined;
  deps.log.warn(
    { err: error, retryInMs: waitMs },
    'could not judge the pending AgentUpgrade or read its signal; retrying',
  );
  deps.gate.explain(
    `could not finish the pending AgentUpgrade: ${messageOf(error)}; ${hint === undefined ? '' : `to repair: ${hint}; `}${retry}`,
    hint ?? retry,
  );
}

/**
 * The signal's state read through a call: it changes while the judgement
 * awaits, which TypeScript's narrowing of the loop's condition cannot know.
 */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

type StartMove = MoveOutcome | { kind: 'lock-busy' } | { kind: 'failed'; reason: string };

/**
 * One start's share of the move, under the activation lock (the only place
 * the daemon takes it at start). A failure is logged, never fatal: failing
 * the start would count toward the unit's start limit for a problem the
 * running daemon does not have.
 */
async function moveUnderLock(deps: StartSequenceDeps): Promise<StartMove> {
  const { paths, log } = deps;
  try {
    return await deps.queue.run('the host-root move', () =>
      reconcileHostRootMove(paths, log, deps.moveHost),
    );
  } catch (error) {
    if (isAgentError(error, 'ACTIVATION_IN_PROGRESS')) {
      log.warn(
        { err: error },
        "not moving the agent's files to the host root: an activation holds the lock",
      );
      return { kind: 'lock-busy' };
    }
    log.error(
      { err: error },
      "could not move the agent's files to the host root; the next daemon start retries",
    );
    return { kind: 'failed', reason: messageOf(error) };
  }
}

/** Removes the copy in /usr/local/bin once nothing runs from the legacy root. Warn-only; whether it removed one. */
async function removeReleasedSeed(paths: HostPaths, log: Logger): Promise<boolean> {
  try {
    if (!(await isLegacyReleased(paths))) return false;
    // A daemon an earlier release's plain unit runs from the seed keeps it (see removeLegacySeed).
    return (await removeLegacySeed(paths, log, process.execPath)) === 'removed';
  } catch (error) {
    log.warn(
      { err: error, path: paths.legacySeed },
      'failed to remove the agent binary left in /usr/local/bin',
    );
    return false;
  }
}

/**
 * Once the legacy root holds nothing of the agent (pass 2 done, the seed
 * gone), the units are rendered again without it among their writable
 * paths. The units this daemon runs under keep it until the next restart,
 * which is harmless; a failure is only logged, since the next start's
 * convergence writes the same units.
 */
async function releaseLegacyRoot(deps: StartSequenceDeps): Promise<void> {
  try {
    await deps.moveHost.rewriteUnits(await resolveHostRoot(deps.paths));
  } catch (error) {
    deps.log.warn(
      { err: error },
      "could not rewrite the agent's units without the legacy root; the next start does",
    );
  }
}

/** Why the gate must stay shut after the move (spec daemon §3.2, plus the unfinished move of the change description). */
async function holdReason(deps: StartSequenceDeps, move: StartMove): Promise<string | undefined> {
  const { paths } = deps;
  if (move.kind === 'restart-queued') return 'the daemon queued its restart from the host root';
  let unfinished: boolean;
  try {
    unfinished = await isHostRootMoveUnfinished(paths);
  } catch (error) {
    return `the host root ${paths.root} cannot be inspected: ${messageOf(error)}`;
  }
  if (unfinished) return `the move of the agent's files into ${paths.root} has not finished`;
  const now = await resolveHostRoot(paths);
  if (now !== deps.startupRoot) {
    // A swap whose later step failed: this daemon's paths name files the units may no longer run.
    return `the host root moved from ${deps.startupRoot} to ${now} under the running daemon`;
  }
  return undefined;
}

/**
 * Keeps the gate shut and waits to be replaced (the queued restart, or an
 * operator's). Not replaced in time, it returns the reason to exit non-zero:
 * Restart= starts the daemon again 30 s later, and holds of 2 min plus 30 s
 * keep those starts at one per 150 s, clear of StartLimitBurst=5 in 300 s.
 */
async function holdAndExit(
  deps: StartSequenceDeps,
  reason: string,
  stopped: AbortSignal,
): Promise<string | undefined> {
  // A restart spaced to stay inside the start limit must fire before the
  // hold ends, or the exit's Restart= would add a start the spacing avoided.
  const spaced = deps.restartDelayMs?.() ?? 0;
  const holdMs = Math.max(deps.holdMs ?? holdForReplacementMs, spaced === 0 ? 0 : spaced + 30_000);
  deps.gate.hold(
    reason,
    'restart the agent (`systemctl restart aks-flex-node-agent`) so the next daemon finishes; this one exits by itself within 2 minutes',
  );
  deps.log.warn({ reason, timeoutMs: holdMs }, 'not taking work until the daemon is restarted');
  try {
    await deps.sleep(holdMs, stopped);
  } catch {
    return undefined; // stopped: the restart came, exit as a stopped daemon does
  }
  return `${reason}, and it was not restarted within ${Math.round(holdMs / 1000)}s`;
}
