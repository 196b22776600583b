import { createApiClient, problemFromError, type StatusResponse } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { isAgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';
import { describeOperationLine } from '../operation-lines.js';
import { printJson, printLine } from '../output.js';
import { watchAgentUnit } from './agent-unit-watch.js';

/**
 * `aks-flex-node status [--json]`: what the running daemon reports. Needs the
 * daemon. The client checks the answer without zod, so it starts about as
 * fast as a bare Node.js (bench/nspawn-pre-start.sh).
 */
export async function runStatus(args: string[]): Promise<number> {
  const flags = parseCommandArgs('status', args, { json: { type: 'boolean', default: false } });
  // A crash-looping agent leaves its socket accepting and never answering:
  // once the unit shows it failing, the wait ends there and says why.
  const failing = new AbortController();
  const stopWatch = watchAgentUnit((error) => {
    failing.abort(error);
  });
  const status = await createApiClient({
    socketPath: hostPaths.socket,
    timeoutMs: 10_000,
    signal: failing.signal,
  })
    .status()
    .finally(stopWatch)
    .catch(explainUnreachable)
    .catch((error: unknown) => {
      // A script reading --json gets a document either way: the problem, as the API writes one.
      if (flags.json && isAgentError(error)) printJson(problemFromError(error));
      throw error;
    });
  if (flags.json) printJson(status);
  else printStatus(status);
  return 0;
}

/**
 * With no daemon answering, the CLI itself says why when the host shows it
 * (no agent binary runs, the agent unit cannot be loaded, the config is
 * invalid), which no daemon can report; loaded only then, so the common
 * status stays small.
 */
async function explainUnreachable(error: unknown): Promise<never> {
  if (isAgentError(error, 'DAEMON_UNREACHABLE')) {
    const { diagnoseUnreachable } = await import('./diagnose-unreachable.js');
    const broken = await diagnoseUnreachable();
    if (broken !== undefined) throw broken;
  }
  throw error;
}

function printStatus(status: StatusResponse): void {
  const { daemon, version, hostRoot } = status;
  // The socket's path, and how the daemon got it: `socket systemd` read as a socket named "systemd".
  const socketFrom = daemon.socket === 'systemd' ? 'from systemd' : 'bound by the daemon';
  printLine(
    `daemon:     running (pid ${daemon.pid}, up ${Math.round(daemon.uptimeSeconds)}s, socket ${daemon.socketPath} ${socketFrom})`,
  );
  printLine(`version:    ${version.version} (commit ${version.commit})`);
  printLine(`executable: ${daemon.executable}`);
  printLine(`host root:  ${hostRoot.path} is ${hostRoot.state}; files at ${hostRoot.resolved}`);
  printLine(`activation: ${status.activationInProgress ? 'in progress' : 'idle'}`);
  const { running, last } = status.operations ?? {};
  if (running !== undefined) printLine(`operation:  ${describeOperationLine(running)}`);
  if (last !== undefined) {
    printLine(`last:       ${describeOperationLine(last)}`);
    if (last.message !== undefined) printLine(`            ${last.message}`);
  }
  const { startup } = status;
  const takes = startup.gate === 'open' ? 'takes changes' : 'takes no changes';
  printLine(`startup:    ${takes}${startup.move === undefined ? '' : `; move: ${startup.move}`}`);
  if (startup.reason !== undefined) printLine(`            ${startup.reason}`);
  for (const problem of startup.problems ?? []) printLine(`problem:    ${problem}`);
  const { machineCopy } = status;
  if (machineCopy !== undefined) {
    printLine(
      `machine:    ${machineCopy.machine}'s copy of the agent differs from current; retrying`,
    );
    printLine(`            ${machineCopy.error}`);
    printLine(`            to repair: ${machineCopy.repair}`);
  }
}
