import {
  createApiClient,
  exitCodes,
  isTerminalOperationState,
  type ApiClient,
  type Operation,
} from '@aks-flex-node/api';
import { readOperationRecord } from '@aks-flex-node/agentbinary';
import { hostPaths, stopAgentCommand } from '@aks-flex-node/layout';
import { pollUntil } from '@aks-flex-node/fs';
import { AgentError, createLogger, isAgentError, type Logger } from '@aks-flex-node/log';
import {
  describeResetPhase,
  describeResetReport,
  readUpgradeForReset,
  resetPhases,
  resetThisHost,
  type ResetReport,
} from '@aks-flex-node/reset';
import { parseCommandArgs } from '../args.js';
import { askYesNo, printJson, printLine } from '../output.js';
import { waitForExit } from '../process-exit.js';
import { requireRoot } from '../require-root.js';
import { resetAfterUpgrade, type UpgradeInFlight } from './reset-after-upgrade.js';

/** How long the daemon may take to answer the request before it counts as not answering. */
const requestTimeoutMs = 15_000;
/** How long to wait for the record after the daemon's stream ended without an outcome. */
const recordWaitMs = 30_000;
/** How long a daemon that reset its host may take to exit once it has recorded the outcome. */
const daemonExitWaitMs = 30_000;

/**
 * `aks-flex-node reset [--json] [--yes]`: removes the agent's units, helpers
 * and upgrade state, keeping its binary for a rejoin. It asks the daemon
 * (the only writer while it runs); only when none answers does it run the
 * same sweep itself, under the same activation lock. It prompts only on a
 * terminal: uninstall.sh and Ignition run it bare and unattended.
 */
export async function runReset(args: string[]): Promise<number> {
  const flags = parseCommandArgs('reset', args, {
    json: { type: 'boolean', default: false },
    yes: { type: 'boolean', short: 'y', default: false },
  });
  requireRoot('reset', 'it stops the agent and removes its units and helpers');
  const interactive = process.stdin.isTTY && process.stdout.isTTY && !flags.json;
  if (interactive && !flags.yes) {
    printLine(
      'This stops the AKS Flex Node agent and removes its units, helpers and upgrade state,',
    );
    printLine(
      "and the node's nspawn machines kube1/kube2 with their root filesystems, LocalDNS, WireGuard and overlay interfaces and policy routes.",
    );
    printLine('The agent binary and /etc/aks-flex-node/config.json are kept for a rejoin.');
    if (!(await askYesNo('Reset this host?'))) {
      printLine('Reset cancelled.');
      return exitCodes.ok.code;
    }
  }
  // Warnings only, on stderr: stdout carries the result (or the one JSON object).
  const log = createLogger({
    level: 'warn',
    destination: process.stderr,
    bindings: { role: 'reset' },
  });
  const operation = await resetAfterUpgrade({
    attempt: () => resetOnce(flags.json, log),
    upgradeInFlight: () => upgradeInFlight(log),
    // With --json, stdout carries only the one object.
    onWaiting: (line) => {
      if (flags.json) process.stderr.write(`${line}\n`);
      else printLine(line);
    },
  });
  if (flags.json) printJson(operation);
  else printLine(`Reset ${operation.state}: ${operation.message ?? ''}`);
  if (operation.state === 'succeeded') return exitCodes.ok.code;
  throw new AgentError('HOST_ROOT_IO', `reset ${operation.id} failed: ${operation.message ?? ''}`, {
    hint: 'see `journalctl -u aks-flex-node-agent` for the cause, then run `aks-flex-node reset` again',
  });
}

/** One reset: through the daemon, or offline when none answers. */
function resetOnce(json: boolean, log: Logger): Promise<Operation> {
  return resetThroughDaemon(json).catch(async (error: unknown) => {
    if (!isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
    if (!json) printLine('No daemon answers; resetting this host directly.');
    return offlineOperation(await resetThisHost(log));
  });
}

/** The AgentUpgrade the signal records, if a reset must wait for it. */
async function upgradeInFlight(log: Logger): Promise<UpgradeInFlight | undefined> {
  const upgrade = await readUpgradeForReset(hostPaths.signalFile, log);
  switch (upgrade.kind) {
    case 'unjudged':
      return {
        operationName: upgrade.operationName,
        signalFile: upgrade.signalFile,
        isSwitched: true,
      };
    case 'ends':
      // Refused with this signal there: an upgrade holds the lock to stage it.
      return {
        operationName: upgrade.signal.operationName,
        signalFile: hostPaths.signalFile,
        isSwitched: false,
      };
    case 'none':
    case 'unreadable':
      return undefined;
    default: {
      const unknown: never = upgrade;
      throw new Error(`unknown upgrade state ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Starts the reset in the daemon and follows it. The daemon stops itself
 * once the outcome is recorded, so the stream may break before the last
 * event arrives; the record on disk then holds the outcome.
 */
async function resetThroughDaemon(json: boolean): Promise<Operation> {
  const client = createApiClient({ socketPath: hostPaths.socket, timeoutMs: requestTimeoutMs });
  const daemonPid = await pidOfDaemon(client);
  const started = await client.beginReset();
  await followToEnd(client, started.id, (phase) => {
    // Sentences, not the events' step ids; the final line says how it ended.
    const isStep = (resetPhases as readonly string[]).includes(phase);
    if (!json && isStep) printLine(`  ${describeResetPhase(phase)}`);
  });
  const operation = await recordedOutcome(started.id);
  // The daemon records the outcome and only then queues its own stop, so
  // without this wait the command could return with the agent still
  // running, and a script that removes the agent's directories next (as
  // uninstall.sh does) would race its last moments. The Go releases' reset
  // returned with the agent stopped; so does this one.
  if (operation.state === 'succeeded' && daemonPid !== undefined) {
    if (!(await waitForExit(daemonPid, daemonExitWaitMs))) {
      process.stderr.write(
        `warning: the daemon (pid ${daemonPid}) was still running ${daemonExitWaitMs / 1000} s after its reset; stop it with \`${stopAgentCommand}\`\n`,
      );
    }
  }
  return operation;
}

/**
 * The pid of the daemon about to reset, from its status. Unreachable is
 * passed on (reset then runs offline); any other failure only costs the
 * wait for its exit.
 */
async function pidOfDaemon(client: ApiClient): Promise<number | undefined> {
  try {
    return (await client.status()).daemon.pid;
  } catch (error) {
    if (isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
    return undefined;
  }
}

/** The outcome the daemon wrote for reset `id`, which outlives the daemon. */
function recordedOutcome(id: string): Promise<Operation> {
  return pollUntil(
    async () => {
      const recorded = await readOperationRecord(hostPaths.operationsDir, id);
      return recorded !== undefined && isTerminalOperationState(recorded.state)
        ? recorded
        : undefined;
    },
    {
      timeoutMs: recordWaitMs,
      intervalMs: 250,
      timedOut: () => {
        throw new AgentError('DAEMON_ERROR', `the daemon recorded no outcome of reset ${id}`, {
          path: hostPaths.operationsDir,
          hint: 'see `journalctl -u aks-flex-node-agent`, then run `aks-flex-node reset` again',
        });
      },
    },
  );
}

async function followToEnd(client: ApiClient, id: string, onPhase: (phase: string) => void) {
  let shown = '';
  try {
    await client.followOperation(id, (event) => {
      if (event.phase !== shown) onPhase((shown = event.phase));
    });
  } catch (error) {
    // The daemon goes away at the end of its own reset; the record says how it ended.
    if (!isAgentError(error, 'DAEMON_UNREACHABLE')) throw error;
  }
}

/** The offline reset, reported in the same shape as the daemon's operation. */
function offlineOperation(report: ResetReport): Operation {
  const now = new Date().toISOString();
  return {
    id: `reset-offline-${now.replace(/[-:.TZ]/g, '')}`,
    kind: 'reset',
    state: 'succeeded',
    phase: 'done',
    message: describeResetReport(report),
    startedAt: now,
    finishedAt: now,
    removed: report.removed,
    ...(report.left.length === 0 ? {} : { left: report.left }),
    ...(report.keptBinary === undefined ? {} : { keptBinary: report.keptBinary }),
  };
}
