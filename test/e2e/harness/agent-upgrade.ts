import { setTimeout as sleep } from 'node:timers/promises';
import type { Operation, OperationEvent } from '@aks-flex-node/api';
import {
  isTerminalOperationState,
  operationEventSchema,
  operationSchema,
} from '@aks-flex-node/api';
import type { Host } from './host.js';
import { productPaths } from './product-names.js';
import type { ReleaseArchive } from './release-archive.js';
import type { CommandResult } from './run-process.js';
import { formatCommandResult } from './run-process.js';
import { runOrThrow } from './run-or-throw.js';
import { copyIn } from './write-host-file.js';

/** Where scenarios put a release archive in the host: /var/tmp survives the host's reboot. */
export const releaseInHost = '/var/tmp/release.tar.gz';

/** Copies a release archive into the host; resolves to the `file://` URL `agent-upgrade` takes. */
export async function copyReleaseIn(
  host: Host,
  release: ReleaseArchive,
  destination = releaseInHost,
): Promise<string> {
  await copyIn(host, release.path, destination, 0o644);
  return `file://${destination}`;
}

/** What `aks-flex-node agent-upgrade --json` printed, parsed, and how it exited. */
export interface AgentUpgradeRun {
  readonly result: CommandResult;
  /** The progress lines, in order. */
  readonly events: readonly OperationEvent[];
  /** The last line: the operation as the CLI last read it, after the restart. */
  readonly operation: Operation;
}

/**
 * Runs `aks-flex-node agent-upgrade --url URL --sha256 HEX --json` as an
 * operator would and parses what it printed, whatever it exited with.
 * Throws with the output when that is not progress lines and a result.
 */
export async function runAgentUpgrade(
  host: Host,
  url: string,
  sha256: string,
): Promise<AgentUpgradeRun> {
  const argv = [productPaths.installedBinary, 'agent-upgrade', '--url', url, '--sha256', sha256];
  const result = await host.run([...argv, '--json'], { timeoutMs: 120_000 });
  const lines = result.stdout.trim().split('\n');
  const events = lines.slice(0, -1).map((line) => operationEventSchema.safeParse(parseLine(line)));
  const operation = operationSchema.safeParse(parseLine(lines.at(-1) ?? ''));
  if (!operation.success || events.some((event) => !event.success)) {
    throw new Error(
      `parse the progress and result of agent-upgrade --json on ${host.name}\n` +
        formatCommandResult(argv.join(' '), result),
    );
  }
  return { result, events: events.flatMap((event) => event.data ?? []), operation: operation.data };
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Where the blue/green links resolve. */
export interface SlotLinks {
  readonly current: string;
  readonly lastGood: string;
}

/** Resolves `aks-flex-node-current` and `aks-flex-node-last-good` in the host. */
export async function readSlotLinks(host: Host): Promise<SlotLinks> {
  const result = await runOrThrow(host, [
    'readlink',
    '-f',
    productPaths.currentLink,
    productPaths.lastGoodLink,
  ]);
  const [current = '', lastGood = ''] = result.stdout.trim().split('\n');
  return { current, lastGood };
}

/**
 * Waits until the operation is settled: its record holds a final state and
 * the signal is gone. The daemon writes the record before it removes the
 * signal, so a caller that saw the result through the API may still find
 * the signal for a moment. Resolves to the record.
 */
export async function waitForUpgradeSettled(
  host: Host,
  operationId: string,
  timeoutMs = 30_000,
): Promise<Operation> {
  const record = `${productPaths.operationsDir}/${operationId}.json`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const recordRead = await host.run(['cat', record]);
    const signalRead = await host.run(['cat', productPaths.signalFile]);
    const parsed = operationSchema.safeParse(parseLine(recordRead.stdout));
    const isSignalGone = signalRead.exitCode !== 0;
    if (isSignalGone && parsed.success && isTerminalOperationState(parsed.data.state)) {
      return parsed.data;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `the AgentUpgrade ${operationId} on ${host.name} did not settle within ${timeoutMs / 1000} s\n` +
          `${formatCommandResult(`cat ${record}`, recordRead)}\n` +
          formatCommandResult(`cat ${productPaths.signalFile}`, signalRead),
      );
    }
    await sleep(200);
  }
}

/** Every operation record in the host, oldest first. */
export async function readOperationRecords(host: Host): Promise<Operation[]> {
  // jq -c: one record per line, however the product formats the files.
  const script = `shopt -s nullglob; records=(${productPaths.operationsDir}/*.json)
(( \${#records[@]} == 0 )) || jq -c . "\${records[@]}"`;
  const result = await runOrThrow(host, script);
  return result.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => operationSchema.parse(JSON.parse(line)))
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
