import type { Host } from '../../test/e2e/harness/index.js';
import { productUnits, runOrThrow } from '../../test/e2e/harness/index.js';

/**
 * Where a restart's downtime goes, from the agent unit's journal: systemd
 * stopping the old daemon, systemd setting up and executing the new one
 * (the unit's sandbox), and the new daemon's own start until it serves.
 */
export interface RestartTimeline {
  /** `Stopping` to `Stopped`/`Deactivated`: the old daemon's shutdown. */
  readonly stopMs: number;
  /** `Stopped` to `Started` (Type=exec: after the execve). */
  readonly execMs: number;
  /** `Started` to the new daemon's `daemon serving`. */
  readonly daemonStartMs: number;
}

interface Entry {
  readonly atMs: number;
  readonly message: string;
}

/**
 * Reads the first restart of the agent unit logged since `sinceMs` (ms since
 * the epoch). Undefined when the journal does not show all four moments.
 */
export async function readRestartTimeline(
  host: Host,
  sinceMs: number,
): Promise<RestartTimeline | undefined> {
  const result = await runOrThrow(host, [
    'journalctl',
    '--unit',
    productUnits.agent,
    '--output=json',
    '--output-fields=MESSAGE',
    '--no-pager',
    `--since=@${(sinceMs / 1000).toFixed(3)}`,
  ]);
  const entries = result.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { __REALTIME_TIMESTAMP: string; MESSAGE?: unknown })
    .map((entry) => ({
      atMs: Number(entry.__REALTIME_TIMESTAMP) / 1000,
      message: typeof entry.MESSAGE === 'string' ? entry.MESSAGE : '',
    }));
  const stopping = find(entries, 0, (message) => message.startsWith('Stopping '));
  const stopped = find(
    entries,
    stopping,
    (message) => message.startsWith('Stopped ') || message.endsWith('Deactivated successfully.'),
  );
  const started = find(entries, stopped, (message) => message.startsWith('Started '));
  const serving = find(entries, started, (message) => message.includes('"msg":"daemon serving"'));
  if (serving === undefined) return undefined;
  const at = (index: number | undefined) => entries[index ?? 0]?.atMs ?? Number.NaN;
  return {
    stopMs: Math.round(at(stopped) - at(stopping)),
    execMs: Math.round(at(started) - at(stopped)),
    daemonStartMs: Math.round(at(serving) - at(started)),
  };
}

/** The index of the first entry from `from` on whose message matches. */
function find(
  entries: readonly Entry[],
  from: number | undefined,
  matches: (message: string) => boolean,
): number | undefined {
  if (from === undefined) return undefined;
  const index = entries.findIndex((entry, at) => at >= from && matches(entry.message));
  return index === -1 ? undefined : index;
}
