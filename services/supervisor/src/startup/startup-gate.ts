import { daemonStartingReason } from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';

/** What `status` shows of the daemon's start: whether it takes changes, and what the move did. */
export interface StartupView {
  gate: 'open' | 'shut';
  /** Why the gate is shut, or (when open) why the host was not moved this start. */
  reason?: string;
  /** The move's outcome at this start (`left-alone`, `not-ready`, `skipped-noexec`, `restart-queued`, `moved`, `failed`, `lock-busy`). */
  move?: string;
  /** What this start could not do that the daemon runs without (a helper it could not refresh). */
  problems?: string[];
}

/**
 * The startup gate: shut while the daemon starts, opened once (never shut
 * again by this process), or held shut with a reason until the process is
 * replaced. Reads are always served; a change asked for while it is shut is
 * refused at once (never left waiting) with what to do.
 */
export interface StartupGate {
  /** The refusal for a change asked for now, or undefined when the gate is open. */
  refusal(purpose: string): AgentError | undefined;
  /** Opens the gate; `note` says why a move did not happen (not-ready, noexec). */
  open(note?: string): void;
  /** While it starts (not held, not open): says what the start does now, after "the daemon is starting: ". */
  starting(detail: string): void;
  /** Keeps the gate shut for good in this process: the next process opens its own. */
  hold(reason: string, hint: string): void;
  /**
   * Says why the gate is still shut while the start retries a step (a
   * judgement that could not finish); no effect once open or held.
   */
  explain(reason: string, hint: string): void;
  /** Records what the move did at this start, for `status`. */
  noteMove(outcome: string): void;
  /** Records a failure of this start that status must show until the next start. */
  noteProblem(problem: string): void;
  view(): StartupView;
}

const startingHint =
  'retry in a few seconds; `aks-flex-node status` shows when the daemon takes changes';

/** A new gate, shut while the daemon starts. */
export function createStartupGate(): StartupGate {
  let state: { gate: 'open'; note?: string } | { gate: 'shut'; reason: string; hint: string } = {
    gate: 'shut',
    reason: `${daemonStartingReason}: it takes changes once it has stayed up a few seconds and finished what an earlier start left`,
    hint: startingHint,
  };
  let move: string | undefined;
  const problems: string[] = [];
  let held = false;
  // Built once per change, not per status read: the status serializer reuses
  // what it validated for the same object.
  let view: StartupView | undefined;
  const currentView = (): StartupView => {
    const built: StartupView = { gate: state.gate };
    const reason = state.gate === 'open' ? state.note : state.reason;
    if (reason !== undefined) built.reason = reason;
    if (move !== undefined) built.move = move;
    if (problems.length > 0) built.problems = [...problems];
    return Object.freeze(built);
  };
  return {
    refusal: (purpose) => {
      if (state.gate === 'open') return undefined;
      return new AgentError('DAEMON_NOT_READY', `${purpose} refused: ${state.reason}`, {
        hint: state.hint,
      });
    },
    open: (note) => {
      // A hold is final for this process: its paths may name files the units no longer run.
      if (held) return;
      state = note === undefined ? { gate: 'open' } : { gate: 'open', note };
      view = undefined;
    },
    starting: (detail) => {
      if (held || state.gate === 'open') return;
      state = { gate: 'shut', reason: `${daemonStartingReason}: ${detail}`, hint: startingHint };
      view = undefined;
    },
    hold: (reason, hint) => {
      held = true;
      state = { gate: 'shut', reason, hint };
      view = undefined;
    },
    explain: (reason, hint) => {
      if (held || state.gate === 'open') return;
      state = { gate: 'shut', reason, hint };
      view = undefined;
    },
    noteMove: (outcome) => {
      move = outcome;
      view = undefined;
    },
    noteProblem: (problem) => {
      problems.push(problem);
      view = undefined;
    },
    view: () => (view ??= currentView()),
  };
}
