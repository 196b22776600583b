import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeIoError } from '@aks-flex-node/fs';
import { isNotFound } from '@aks-flex-node/log';

/** The agent unit's start limit, as `systemctl show` reports it. */
export interface StartLimit {
  intervalMs: number;
  burst: number;
}

/** What the agent unit ships with (systemd/aks-flex-node-agent.service); used when systemd cannot be asked. */
export const shippedStartLimit: StartLimit = { intervalMs: 300_000, burst: 5 };

/** How many recent starts the record keeps: more than any burst the unit allows. */
const keptStarts = 16;

/** Milliseconds on CLOCK_MONOTONIC, the clock systemd's start limit counts on, shared by every process since boot. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

/**
 * How long a planned restart must wait so the unit's starts stay inside its
 * start limit with one start to spare for Restart= after a crash. Only used
 * where `reset-failed` is refused (Azure Container Linux's SELinux policy),
 * so nothing clears the counter: `starts` are the daemon's own recorded
 * starts (each one a start systemd counted), `now` on the same clock.
 */
export function plannedRestartDelayMs(
  starts: readonly number[],
  now: number,
  limit: StartLimit,
): number {
  // The planned restart plus one crash restart must both fit in the window.
  const allowedBefore = Math.max(0, limit.burst - 2);
  const recent = starts.filter((at) => at > now - limit.intervalMs).sort((a, b) => a - b);
  if (recent.length <= allowedBefore) return 0;
  // Wait until enough of the oldest starts have left the window.
  const mustAgeOut = recent[recent.length - allowedBefore - 1] ?? now;
  return Math.max(0, mustAgeOut + limit.intervalMs - now) + 1_000;
}

/** Records this daemon's start; a tmpfs file under /run, so a reboot clears it as it clears systemd's count. */
export async function recordAgentStart(file: string, at: number): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o750 });
    const kept = (await readAgentStarts(file)).slice(-(keptStarts - 1));
    if (kept.length === keptStarts - 1) {
      await writeFile(file, [...kept, at].map((t) => `${t}\n`).join(''), { mode: 0o600 });
    } else {
      await appendFile(file, `${at}\n`, { mode: 0o600 });
    }
  } catch (error) {
    throw makeIoError('record the agent start in', file, error);
  }
}

/** The recorded starts; none when the record is missing. Unparsable lines are skipped. */
export async function readAgentStarts(file: string): Promise<number[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return [];
    throw makeIoError('read', file, error);
  }
  return text
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((value) => Number.isFinite(value) && value > 0);
}

/** Parses `systemctl show -p StartLimitIntervalUSec -p StartLimitBurst` (`5min`, `300s`, `1min 30s`, or µs). */
export function parseStartLimit(show: string): StartLimit | undefined {
  const field = (name: string) =>
    show
      .split('\n')
      .find((line) => line.startsWith(`${name}=`))
      ?.slice(name.length + 1)
      .trim();
  const burst = Number(field('StartLimitBurst'));
  const interval = parseSystemdSpan(field('StartLimitIntervalUSec') ?? '');
  if (!Number.isInteger(burst) || burst <= 0 || interval === undefined) return undefined;
  return { intervalMs: interval, burst };
}

const spanUnits: Record<string, number> = {
  us: 0.001,
  ms: 1,
  s: 1_000,
  min: 60_000,
  h: 3_600_000,
};

function parseSystemdSpan(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text) / 1000; // bare microseconds
  const parts = [...text.matchAll(/(\d+)\s*(us|ms|min|s|h)/g)];
  if (parts.length === 0) return undefined;
  return parts.reduce(
    (sum, [, value, unit]) => sum + Number(value) * (spanUnits[unit ?? 's'] ?? 0),
    0,
  );
}
