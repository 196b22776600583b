import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminalOperationState, type Operation } from '@aks-flex-node/api';
import { type PollClock } from '@aks-flex-node/fs';
import { AgentError, isAgentError, messageOf, type ErrorCode } from '@aks-flex-node/log';
import { agentCommand } from '../agent-command.js';

/** Where the result of an AgentUpgrade can be read; production reads the socket and the host's files. */
export interface UpgradeResultSources {
  /** The daemon's answer for the operation, given up after `timeoutMs`; throws as the API client does. */
  ask(id: string, timeoutMs: number): Promise<Operation>;
  /** Whether the upgrade signal names the operation: a daemon still has it to judge. */
  isSignalled(id: string): Promise<boolean>;
  /** The operation's record on disk, which outlives every daemon and a reset. */
  readRecord(id: string): Promise<Operation | undefined>;
}

/** Options for {@link awaitUpgradeResult}. */
export interface AwaitResultOptions {
  /** `--timeout`: the whole wait, each request included, never runs past it. */
  timeoutMs: number;
  /** Says what the wait is on whenever that changes, so it is never silent. */
  onNote: (line: string) => void;
  intervalMs?: number;
  /** How long no daemon, no signal and no record must last before the operation counts as ended. */
  goneAfterMs?: number;
  /** The longest one request may take; a restarting daemon's socket holds a request until it serves. */
  requestMs?: number;
  clock?: PollClock;
  /** Stops the wait with its reason (Ctrl-C after the switch: the upgrade goes on without this command). */
  signal?: AbortSignal;
}

/** What one look found: the result, or what is being waited on. */
type Look =
  | { kind: 'ended'; operation: Operation }
  | { kind: 'daemon'; state: string }
  | { kind: 'signalled' }
  | { kind: 'unknown'; reason: string }
  | { kind: 'gone' };

/** Answers that say only that this daemon cannot tell: none answered, or one that does not know the id. */
const noAnswerCodes: readonly ErrorCode[] = [
  'DAEMON_UNREACHABLE',
  'DAEMON_ERROR',
  'NOT_FOUND',
  'REQUEST_TIMEOUT',
];

const realClock: PollClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

/**
 * Waits for an AgentUpgrade's result through the daemon's restart. The
 * daemon is asked first; when none answers for it (restarting, stopped by a
 * reset, or a daemon that no longer knows it), the record and the signal on
 * disk are read, since a reset may have stopped every daemon after the
 * judgement (or ended the upgrade itself) and recorded the end. With no
 * daemon, no signal and no record for `goneAfterMs`, nothing can finish it
 * any more: that is reported at once, not after `--timeout`.
 *
 * Throws NOT_FOUND when the operation ended without a record, and
 * OPERATION_TIMED_OUT when `timeoutMs` passes first: the operation goes on.
 */
export async function awaitUpgradeResult(
  id: string,
  sources: UpgradeResultSources,
  options: AwaitResultOptions,
): Promise<Operation> {
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + options.timeoutMs;
  const goneAfterMs = options.goneAfterMs ?? 3_000;
  let goneSince: number | undefined;
  let lastNote = '';
  for (;;) {
    options.signal?.throwIfAborted();
    const remaining = Math.max(deadline - clock.now(), 1);
    const look = await lookOnce(id, sources, Math.min(options.requestMs ?? 5_000, remaining));
    if (look.kind === 'ended') return look.operation;
    const note = describeLook(id, look);
    if (note !== lastNote) options.onNote((lastNote = note));
    goneSince = look.kind === 'gone' ? (goneSince ?? clock.now()) : undefined;
    if (goneSince !== undefined && clock.now() - goneSince >= goneAfterMs)
      throw endedWithoutRecord(id);
    if (clock.now() >= deadline) throw timedOut(id, options.timeoutMs, note);
    await clock.sleep(Math.min(options.intervalMs ?? 500, Math.max(deadline - clock.now(), 0)));
  }
}

async function lookOnce(
  id: string,
  sources: UpgradeResultSources,
  requestMs: number,
): Promise<Look> {
  try {
    const operation = await sources.ask(id, requestMs);
    if (isTerminalOperationState(operation.state)) return { kind: 'ended', operation };
    // "restarting (restarting)" says it twice; the phase only when it adds something.
    const { state, phase } = operation;
    return { kind: 'daemon', state: phase === state ? state : `${state} (${phase})` };
  } catch (error) {
    // Not answered, or answered that this daemon does not know it: the disk knows.
    if (!noAnswerCodes.some((code) => isAgentError(error, code))) throw error;
  }
  try {
    // The signal before the record: a judgement writes the record and then
    // removes the signal, so a signal seen gone here means any record
    // written for it is already there to read.
    const signalled = await sources.isSignalled(id);
    const record = await sources.readRecord(id);
    if (record !== undefined && isTerminalOperationState(record.state)) {
      return { kind: 'ended', operation: record };
    }
    return signalled || record !== undefined ? { kind: 'signalled' } : { kind: 'gone' };
  } catch (error) {
    // A file that cannot be read tells nothing either way; the deadline bounds the wait.
    return { kind: 'unknown', reason: messageOf(error) };
  }
}

function describeLook(id: string, look: Exclude<Look, { kind: 'ended' }>): string {
  switch (look.kind) {
    case 'daemon':
      return `AgentUpgrade ${id} is ${look.state}; waiting for its result`;
    case 'signalled':
      return `no daemon answers for AgentUpgrade ${id} yet; waiting for the restarted agent to judge it`;
    case 'unknown':
      return `no daemon answers for AgentUpgrade ${id}, and its state on disk cannot be read (${look.reason}); waiting`;
    case 'gone':
      return `no daemon answers for AgentUpgrade ${id}, and neither its record nor the upgrade signal names it`;
    default: {
      const unknown: never = look;
      return `unknown wait ${JSON.stringify(unknown)}`;
    }
  }
}

function endedWithoutRecord(id: string): AgentError {
  return new AgentError(
    'NOT_FOUND',
    `AgentUpgrade ${id} ended without a result: no daemon answers for it, and neither its record nor the upgrade signal is left (the agent was reset or uninstalled meanwhile)`,
    {
      path: id,
      hint: `see which binary runs with \`${agentCommand('status')}\` (or \`${agentCommand('version')}\` when no daemon answers), and run the upgrade again once the agent is back`,
    },
  );
}

function timedOut(id: string, timeoutMs: number, lastNote: string): AgentError {
  return stillRunning(id, `did not finish within ${Math.round(timeoutMs / 1000)} s (${lastNote})`);
}

/**
 * The error a command ends with when it stops waiting for an AgentUpgrade
 * that goes on without it (--timeout, or Ctrl-C after the switch).
 */
export function stillRunning(id: string, why: string): AgentError {
  return new AgentError(
    'OPERATION_TIMED_OUT',
    `AgentUpgrade ${id} ${why}; it goes on without this command: the agent judges it, and rolls it back if the new binary fails`,
    { path: id, hint: `follow it with \`${agentCommand(`operations ${id}`)}\`` },
  );
}
