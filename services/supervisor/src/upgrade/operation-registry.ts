import { randomBytes } from 'node:crypto';
import {
  isTerminalOperationState,
  type Operation,
  type OperationEvent,
  type OperationKind,
  type OperationState,
} from '@aks-flex-node/api';
import { AgentError } from '@aks-flex-node/log';

/** A change to report about a running operation. */
export interface OperationUpdate {
  phase?: string;
  state?: OperationState;
  message?: string;
  receivedBytes?: number;
  totalBytes?: number;
  fields?: Partial<
    Pick<
      Operation,
      | 'fromPath'
      | 'toPath'
      | 'toVersion'
      | 'switchedAt'
      | 'finishedAt'
      | 'removed'
      | 'keptBinary'
      | 'code'
      | 'hint'
    >
  >;
}

type Listener = (event: OperationEvent) => void;

interface Tracked {
  operation: Operation;
  events: OperationEvent[];
  listeners: Set<Listener>;
}

/** The operations this daemon process runs: their state and progress events, in memory. */
export interface OperationRegistry {
  /** A new running operation; an AgentUpgrade names its source, a reset has none. */
  create(sourceUrl: string | undefined, kind?: OperationKind): Operation;
  update(id: string, update: OperationUpdate): void;
  get(id: string): Operation | undefined;
  /** Whether this process runs (or ran) the operation. */
  has(id: string): boolean;
  /** The latest operation of this process that has not ended. */
  running(): Operation | undefined;
  /** The operation that ended last: this process's, or the record {@link remember} was given. */
  lastFinished(): Operation | undefined;
  /** Takes a finished operation's record (the newest on disk, at start) as the last one, unless a newer one ended here. */
  remember(record: Operation): void;
  /** Replays the events so far, then calls `listener` for each new one; returns an unsubscribe. */
  subscribe(id: string, listener: Listener): (() => void) | undefined;
}

/** Whether an event ends the stream a client follows: the daemon is about to restart, or the operation ended. */
export function endsEventStream(event: OperationEvent): boolean {
  return event.state === 'restarting' || isTerminalOperationState(event.state);
}

/** Builds the registry. Ids are time-ordered and random, and safe as file names. */
export function createOperationRegistry(now: () => Date = () => new Date()): OperationRegistry {
  const tracked = new Map<string, Tracked>();
  let seq = 0;
  let remembered: Operation | undefined;
  const latest = (ended: boolean): Operation | undefined => {
    // A Map iterates in insertion order: the last match is the newest.
    let found: Operation | undefined;
    for (const entry of tracked.values()) {
      if (isTerminalOperationState(entry.operation.state) === ended) found = entry.operation;
    }
    return found === undefined ? undefined : { ...found };
  };
  const emit = (entry: Tracked, update: OperationUpdate) => {
    const event: OperationEvent = {
      seq: ++seq,
      at: now().toISOString(),
      phase: entry.operation.phase,
      state: entry.operation.state,
    };
    if (update.message !== undefined) event.message = update.message;
    if (update.receivedBytes !== undefined) event.receivedBytes = update.receivedBytes;
    if (update.totalBytes !== undefined) event.totalBytes = update.totalBytes;
    entry.events.push(event);
    for (const listener of entry.listeners) listener(event);
  };
  return {
    create: (sourceUrl, kind = 'agent-upgrade') => {
      const prefix = kind === 'reset' ? 'reset' : 'upgrade';
      const id = `${prefix}-${now()
        .toISOString()
        .replace(/[-:.TZ]/g, '')}-${randomBytes(4).toString('hex')}`;
      const operation: Operation = {
        id,
        kind,
        state: 'running',
        phase: 'accepted',
        startedAt: now().toISOString(),
        ...(sourceUrl === undefined ? {} : { sourceUrl }),
      };
      const entry: Tracked = { operation, events: [], listeners: new Set() };
      tracked.set(id, entry);
      emit(entry, {});
      return { ...operation };
    },
    update: (id, update) => {
      const entry = tracked.get(id);
      if (entry === undefined) return;
      if (update.phase !== undefined) entry.operation.phase = update.phase;
      if (update.state !== undefined) entry.operation.state = update.state;
      if (update.message !== undefined) entry.operation.message = update.message;
      if (update.receivedBytes !== undefined) entry.operation.receivedBytes = update.receivedBytes;
      if (update.totalBytes !== undefined) entry.operation.totalBytes = update.totalBytes;
      Object.assign(entry.operation, update.fields);
      emit(entry, update);
    },
    has: (id) => tracked.has(id),
    running: () => latest(false),
    lastFinished: () => latest(true) ?? (remembered === undefined ? undefined : { ...remembered }),
    remember: (record) => {
      remembered = record;
    },
    get: (id) => {
      const entry = tracked.get(id);
      return entry === undefined ? undefined : { ...entry.operation };
    },
    subscribe: (id, listener) => {
      const entry = tracked.get(id);
      if (entry === undefined) return undefined;
      for (const event of entry.events) listener(event);
      entry.listeners.add(listener);
      return () => entry.listeners.delete(listener);
    },
  };
}

/** The cancel handles of the upgrades this process runs. */
export interface UpgradeCancels {
  /** A signal that cancels the operation's upgrade. */
  open(id: string): AbortSignal;
  /** The operation's background task, awaited by a cancel. */
  track(id: string, task: Promise<void>): void;
  /** The upgrade ended: a later cancel is refused. */
  close(id: string): void;
  /**
   * Cancels an upgrade that has not begun to switch, and resolves once it has
   * stopped (rolled back to the layout it found). Throws NOT_FOUND or
   * OPERATION_NOT_CANCELLABLE.
   */
  cancel(id: string): Promise<void>;
}

interface Handle {
  controller: AbortController;
  task?: Promise<void>;
}

/**
 * Builds the cancel handles. An upgrade can be cancelled while its phase is
 * before `switching`: stageAndSwitch checks the signal and enters that phase
 * in one synchronous step, so a cancel either stops it there or is refused.
 */
export function createUpgradeCancels(registry: OperationRegistry): UpgradeCancels {
  const handles = new Map<string, Handle>();
  return {
    open: (id) => {
      const controller = new AbortController();
      handles.set(id, { controller });
      return controller.signal;
    },
    track: (id, task) => {
      const handle = handles.get(id);
      if (handle !== undefined) handle.task = task;
    },
    close: (id) => {
      handles.delete(id);
    },
    cancel: async (id) => {
      const operation = registry.get(id);
      if (operation === undefined) {
        throw new AgentError('NOT_FOUND', `no running operation ${id}`, {
          path: id,
          hint: 'see the operation with `aks-flex-node operations ID`; only an upgrade this daemon runs can be cancelled',
        });
      }
      const handle = handles.get(id);
      if (
        handle === undefined ||
        operation.state !== 'running' ||
        operation.phase === 'switching'
      ) {
        throw new AgentError(
          'OPERATION_NOT_CANCELLABLE',
          `AgentUpgrade ${id} is ${operation.state} (phase ${operation.phase}) and can no longer be cancelled`,
          {
            path: id,
            hint: 'wait for it to finish; a switched upgrade that misbehaves is rolled back with `aks-flex-node recover-agent-upgrade --message TEXT`',
          },
        );
      }
      handle.controller.abort(
        new AgentError('OPERATION_CANCELLED', `AgentUpgrade ${id} was cancelled on request`, {
          path: id,
          hint: 'start it again with `aks-flex-node agent-upgrade --url URL` when wanted',
        }),
      );
      await handle.task;
    },
  };
}
