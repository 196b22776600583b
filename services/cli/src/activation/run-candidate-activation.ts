import { activateCandidate, snapshotCandidate, createHost } from '@aks-flex-node/agentbinary';
import { createApiClient, type ActivationResult, type Operation } from '@aks-flex-node/api';
import { retryWhileStarting } from '../retry-while-starting.js';
import { hostPaths } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import { createCommandLogger } from '../command-logger.js';
import { printJson, printLine } from '../output.js';
import { requireRoot } from '../require-root.js';
import { followUpgrade } from '../progress/follow-upgrade.js';

/**
 * `agent-upgrade --candidate PATH [--json]`: a direct activation. The
 * candidate's bytes are pinned first, in a private snapshot, so replacing
 * the file afterwards changes nothing. When the daemon answers, it gets the
 * snapshot and runs its usual blue/green upgrade (this process follows it as
 * for `--url`); when none answers, this process activates the snapshot
 * itself. Neither overwrites the binary the running agent executes.
 */
export async function runCandidateActivation(
  candidate: string,
  options: { json: boolean; timeoutMs: number },
): Promise<number> {
  requireRoot('agent-upgrade', 'it installs the candidate and switches the agent to it');
  // Under the daemon's state directory, not /tmp: the binary is large, and
  // the daemon reads it from there.
  const snapshot = await snapshotCandidate(candidate, hostPaths.stateDir);
  try {
    const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: 30_000 });
    const operation = await beginIfAnswering(() =>
      retryWhileStarting(() => client.beginAgentUpgrade({ source: { binaryPath: snapshot.path } })),
    );
    if (operation !== undefined) {
      return await followUpgrade(client, operation, { ...options, phaseNames: binaryPhaseNames });
    }
    const result = await activateLocally(candidate, snapshot.path, options.json);
    if (options.json) printJson(result);
    else printLine(describeResult(result));
    return 0;
  } finally {
    await snapshot.dispose();
  }
}

/** The daemon's archive phases, as they read for a binary that is already on the host. */
const binaryPhaseNames = { downloading: 'checking', extracting: 'copying' } as const;

async function beginIfAnswering(begin: () => Promise<Operation>): Promise<Operation | undefined> {
  try {
    return await begin();
  } catch (error) {
    if (isAgentError(error, 'DAEMON_UNREACHABLE')) return undefined;
    throw error;
  }
}

/**
 * No daemon answers, so this process is the one writer of the layout. A
 * SIGINT or SIGTERM cancels the activation, and a switch it interrupts is
 * rolled back before the process exits.
 */
async function activateLocally(
  candidate: string,
  snapshot: string,
  json: boolean,
): Promise<ActivationResult> {
  // Progress goes to stderr, so --json keeps stdout to one object.
  const log = createCommandLogger('agent-upgrade', { json });
  const controller = new AbortController();
  const cancel = () => {
    controller.abort(new Error('cancelled by a signal'));
  };
  process.once('SIGINT', cancel);
  process.once('SIGTERM', cancel);
  try {
    return await activateCandidate({
      paths: hostPaths,
      candidatePath: candidate,
      snapshotPath: snapshot,
      host: createHost({ log }),
      log,
      signal: controller.signal,
    });
  } finally {
    process.off('SIGINT', cancel);
    process.off('SIGTERM', cancel);
  }
}

function describeResult(result: ActivationResult): string {
  if (result.changed) return `activated host agent daemon: ${result.previous} -> ${result.current}`;
  const repaired = result.repairedLastGood ? '; repaired the last-good link' : '';
  if (result.initialized) {
    return `initialized the managed binary layout; the agent runs ${result.current}${repaired}`;
  }
  return `the candidate is identical to ${result.current}; nothing installed${repaired}`;
}
