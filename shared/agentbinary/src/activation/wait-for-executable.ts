import { AgentError, messageOf } from '@aks-flex-node/log';
import type { ServiceHost } from './service-host.js';

/** Health timing (spec agentbinary §3.6.3 WaitHealthy, rationale §8.18). */
export const healthTiming = { limitMs: 30_000, stableMs: 3_000, pollMs: 250 } as const;

/** What {@link waitForExecutable} watches. */
export interface WaitForExecutableOptions {
  unit: string;
  /** The resolved binary the unit's main process must execute. */
  expected: string;
  host: ServiceHost;
  signal: AbortSignal;
  timing?: { limitMs: number; stableMs: number; pollMs: number };
}

/**
 * Resolves once the unit's main process has executed `expected` for 3 s
 * without a break, checked every 250 ms for up to 30 s. A Type=exec unit
 * reports a successful start before the daemon proves anything, so only a
 * process that stays up on the right binary counts; any miss starts the 3 s
 * again.
 *
 * Throws UPGRADE_FAILED with the last thing that was wrong.
 */
export async function waitForExecutable(options: WaitForExecutableOptions): Promise<void> {
  const { host, signal } = options;
  const timing = options.timing ?? healthTiming;
  const deadline = host.now() + timing.limitMs;
  let healthySince: number | undefined;
  let lastProblem = 'it was never checked';
  for (;;) {
    signal.throwIfAborted();
    const problem = await findProblem(options);
    const now = host.now();
    if (problem === undefined) {
      healthySince ??= now;
      if (now - healthySince >= timing.stableMs) return;
    } else {
      healthySince = undefined;
      lastProblem = problem;
    }
    if (now >= deadline) {
      throw new AgentError(
        'UPGRADE_FAILED',
        `${options.unit} did not become healthy on ${options.expected} within ${timing.limitMs / 1000}s: ${lastProblem}`,
        { path: options.expected, hint: `see why with \`journalctl -u ${options.unit}\`` },
      );
    }
    await host.sleep(timing.pollMs, signal);
  }
}

/** What keeps the unit from counting as healthy now, or undefined when nothing does. */
async function findProblem(options: WaitForExecutableOptions): Promise<string | undefined> {
  const { host, unit, expected } = options;
  let pid: number;
  try {
    pid = await host.systemctl.mainPid(unit);
  } catch (error) {
    return `its main process could not be read: ${messageOf(error)}`;
  }
  if (pid <= 0) return 'it has no main process';
  let executable: string;
  try {
    executable = await host.processExecutable(pid);
  } catch (error) {
    return `the binary of process ${pid} could not be read: ${messageOf(error)}`;
  }
  return executable === expected
    ? undefined
    : `its main process ${pid} executes ${executable}, not ${expected}`;
}
