import { readOperationRecord, readUpgradeSignal } from '@aks-flex-node/agentbinary';
import {
  createApiClient,
  exitCodes,
  type ApiClient,
  type Operation,
  type OperationEvent,
} from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import { printJson, printLine, printNote } from '../output.js';
import {
  awaitUpgradeResult,
  stillRunning,
  type UpgradeResultSources,
} from './await-upgrade-result.js';
import { cancelOnInterrupt } from './cancel-upgrade.js';
import { createProgressView, type ProgressView } from './upgrade-progress.js';
import { describeSucceeded, upgradeEndError } from './upgrade-outcome.js';

/**
 * Shows an AgentUpgrade's progress and follows it through the daemon's
 * restart into the candidate until the result is known, from the daemon or,
 * when none answers for it (a reset stopped the agent), from its record.
 * The result is printed once: on stdout when it succeeded (the operation with
 * --json, which also prints a failed one there), otherwise as the error the
 * command ends with. Returns 0 when the candidate runs; throws the error of a
 * failed, refused, cancelled or rolled-back upgrade (upgrade-outcome.ts), and
 * OPERATION_TIMED_OUT when `timeoutMs` passes or Ctrl-C comes after the switch.
 */
export async function followUpgrade(
  client: ApiClient,
  operation: Operation,
  options: { json: boolean; timeoutMs: number; phaseNames?: Readonly<Record<string, string>> },
): Promise<number> {
  const { id } = operation;
  const deadline = Date.now() + options.timeoutMs;
  // Ctrl-C cancels before the switch; after it, it stops this command (abandon), not the upgrade.
  const abandon = new AbortController();
  let switched = false;
  const view = createProgressView(options.json);
  const stopCancelling = cancelOnInterrupt(client, id, {
    hasSwitched: () => switched,
    abandon,
    note: (line) => {
      view.note(line);
    },
  });
  try {
    await followEvents(client, id, { ...options, abandon, view }, (event) => {
      switched ||= event.phase === 'switching' || event.state !== 'running';
    });
    // The stream ends at the restart or at the end: nothing can cancel it from here on.
    switched = true;
    const result = await awaitUpgradeResult(id, hostResultSources, {
      timeoutMs: Math.max(deadline - Date.now(), 1),
      // Progress, never the result: stdout carries only that (and the events with --json).
      onNote: printNote,
      signal: abandon.signal,
    });
    if (options.json) printJson(result);
    const failure = upgradeEndError(result);
    if (failure !== undefined) throw failure;
    if (!options.json) printLine(describeSucceeded(result));
    return exitCodes.ok.code;
  } finally {
    stopCancelling();
  }
}

/** Shows the operation's events until the daemon ends the stream; throws OPERATION_TIMED_OUT at `timeoutMs`. */
async function followEvents(
  client: ApiClient,
  id: string,
  options: {
    json: boolean;
    timeoutMs: number;
    abandon: AbortController;
    view: ProgressView;
    phaseNames?: Readonly<Record<string, string>>;
  },
  onEvent: (event: OperationEvent) => void,
): Promise<void> {
  const { view } = options;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  try {
    await client.followOperation(
      id,
      (event) => {
        onEvent(event);
        // Only the human view renames phases; --json prints the API's events as they are.
        const phase = options.json ? undefined : options.phaseNames?.[event.phase];
        view.show(phase === undefined ? event : { ...event, phase });
      },
      AbortSignal.any([options.abandon.signal, timeout]),
    );
  } catch (error) {
    if (options.abandon.signal.aborted) throw options.abandon.signal.reason as Error;
    if (timeout.aborted) {
      throw stillRunning(id, `did not finish within ${Math.round(options.timeoutMs / 1000)} s`);
    }
    // The stream may break as the daemon restarts, or reach the next daemon,
    // which did not run the operation; the result is read below either way.
    if (!isAgentError(error, 'DAEMON_UNREACHABLE') && !isAgentError(error, 'NOT_FOUND'))
      throw error;
  } finally {
    view.stop();
  }
}

/** The daemon over a fresh client per request (each with its own bound), and the host's files. */
const hostResultSources: UpgradeResultSources = {
  ask: (id, timeoutMs) =>
    createApiClient({ socketPath: hostPaths.socket, timeoutMs }).operation(id),
  isSignalled: async (id) => (await readUpgradeSignal(hostPaths.signalFile))?.operationName === id,
  readRecord: (id) => readOperationRecord(hostPaths.operationsDir, id),
};
