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
import { shellPause } from './shell-pause.js';
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

// Waits in the host, with builtins only, until the signal is gone and the
// record exists, up to $3 s, then prints the record (nothing when there is
// none) and exits 0 when the signal is gone, 3 while it is not. One run
// through nsenter per change, where two `cat`s through nsenter every 200 ms
// (each a spawn from this 100 MB worker, nsenter, timeout and cat) kept a
// fifth of a core busy through every upgrade's stability interval.
const settleScript = `
record=$1 signal=$2 seconds=$3
${shellPause}
deadline=$((SECONDS + seconds))
until [[ ! -e $signal && -s $record ]] || (( SECONDS >= deadline )); do
  nap 0.2
done
[[ -s $record ]] && cat -- "$record"
[[ ! -e $signal ]] || exit 3
`;

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
    const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    const argv = ['/bin/bash', '-c', settleScript, 'settle', record, productPaths.signalFile];
    const look = await host.run([...argv, String(seconds)], { timeoutMs: seconds * 1000 + 5000 });
    const parsed = operationSchema.safeParse(parseLine(look.stdout.trim()));
    if (look.exitCode === 0 && parsed.success && isTerminalOperationState(parsed.data.state)) {
      return parsed.data;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `the AgentUpgrade ${operationId} on ${host.name} did not settle within ${timeoutMs / 1000} s ` +
          (look.exitCode === 3
            ? `(the signal ${productPaths.signalFile} is still there)\n`
            : `(the record is missing or not final)\n`) +
          formatCommandResult(`wait for ${record}`, look),
      );
    }
    // The record is there and the signal gone, but the record is not final
    // yet (or did not parse): look again shortly.
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
