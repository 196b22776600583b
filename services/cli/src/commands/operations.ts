import { listOperationRecords, readOperationRecord } from '@aks-flex-node/agentbinary';
import { createApiClient, exitCodes, type Operation, type OperationList } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { agentCommand } from '../agent-command.js';
import { parseCommandArgsWithPositionals } from '../args.js';
import { requireRoot } from '../require-root.js';
import { describeOperationLine, describeOperationRecord } from '../operation-lines.js';
import { printJson, printLine, printNote } from '../output.js';

/** How long the daemon gets to say what runs; the records on disk answer the rest. */
const askMs = 5_000;

/**
 * `aks-flex-node operations [ID] [--json]`: the operations' records. Without
 * an id, the one the daemon runs now (when one answers) and the records on
 * disk, newest first; with one, that operation as the daemon knows it (its
 * progress while it runs), or its record when no daemon answers. Records
 * outlive the daemon and a reset, so this works on a host with no agent
 * running. Throws NOT_FOUND for an id with neither.
 */
export async function runOperations(args: string[]): Promise<number> {
  requireRoot('operations', "the records and the daemon's socket are root's only");
  const { values: flags, positionals } = parseCommandArgsWithPositionals('operations', args, {
    json: { type: 'boolean', default: false },
  });
  const [id, ...extra] = positionals;
  if (extra.length > 0) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `operations takes one id, not ${positionals.join(' ')}`,
      {
        hint: 'aks-flex-node operations [ID] [--json]',
      },
    );
  }
  if (id !== undefined) {
    const operation = await findOperation(id);
    if (flags.json) printJson(operation);
    else for (const line of describeOperationRecord(operation)) printLine(line);
    return exitCodes.ok.code;
  }
  const list = await listOperations();
  if (flags.json) printJson(list);
  else printList(list);
  return exitCodes.ok.code;
}

async function findOperation(id: string): Promise<Operation> {
  try {
    return await createApiClient({ socketPath: hostPaths.socket, timeoutMs: askMs }).operation(id);
  } catch (error) {
    // No daemon, or one that does not know it: its record is on disk if it ended.
    if (!isAgentError(error, 'DAEMON_UNREACHABLE') && !isAgentError(error, 'NOT_FOUND'))
      throw error;
  }
  const record = await readOperationRecord(hostPaths.operationsDir, id);
  if (record !== undefined) return record;
  throw new AgentError(
    'NOT_FOUND',
    `no operation ${id}: no daemon knows it, and ${hostPaths.operationsDir} holds no record of it`,
    { path: id, hint: `list the operations with \`${agentCommand('operations')}\`` },
  );
}

async function listOperations(): Promise<OperationList> {
  const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: askMs });
  const running = await client.status().then(
    (status) => status.operations?.running,
    (error: unknown) => {
      // The records answer without a daemon; say why the running one is missing.
      if (!isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
      printNote('no daemon answers; showing the records on disk only');
      return undefined;
    },
  );
  const { records, unreadable } = await listOperationRecords(hostPaths.operationsDir);
  for (const error of unreadable) printNote(`warning: ${error.message}`);
  return running === undefined ? { records } : { running, records };
}

function printList(list: OperationList): void {
  if (list.running !== undefined) printLine(`running:  ${describeOperationLine(list.running)}`);
  if (list.records.length === 0 && list.running === undefined) {
    printLine(`no operations recorded in ${hostPaths.operationsDir}`);
    return;
  }
  for (const record of list.records) printLine(`finished: ${describeOperationLine(record)}`);
}
