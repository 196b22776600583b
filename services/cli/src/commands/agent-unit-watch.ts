import { createSystemctl, runBuiltin } from '@aks-flex-node/systemd';
import { hostPaths, unitNames } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';

/** What systemd says of the agent unit, as `systemctl show` prints it. */
export interface AgentUnitState {
  activeState: string;
  subState: string;
  /** Why it last stopped (`exit-code`, `start-limit-hit`), where known. */
  result?: string;
  /** How many times systemd restarted it, where known. */
  restarts?: number;
}

/**
 * Whether the agent unit is failing: stopped as failed, or waiting to be
 * restarted after its process ended. Either way no daemon answers soon, so
 * a command waiting for one stops waiting and says why.
 */
export function isFailing(state: AgentUnitState): boolean {
  return state.activeState === 'failed' || state.subState === 'auto-restart';
}

/**
 * The agent unit's state, undefined when systemctl cannot say (no bus, no
 * systemd): then nothing is claimed.
 */
export async function readAgentUnitState(): Promise<AgentUnitState | undefined> {
  const systemctl = createSystemctl({
    log: { debug: () => undefined },
    run: runBuiltin,
    timeoutMs: 5_000,
  });
  const shown = await systemctl
    .show(unitNames.agent, ['ActiveState', 'SubState', 'Result', 'NRestarts'])
    .catch(() => undefined);
  if (shown === undefined) return undefined;
  const props = new Map(
    shown
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    activeState: props.get('ActiveState') ?? '',
    subState: props.get('SubState') ?? '',
    result: props.get('Result') ?? '',
    restarts: Number(props.get('NRestarts') ?? '0'),
  };
}

/**
 * The error for a failing agent unit: its state, the last error the agent
 * logged (the journal's last `error:` line, or its last line), and where to
 * read more. DAEMON_UNREACHABLE: no daemon answers, and nothing more
 * specific (an invalid config, a broken binary) was found.
 */
export function failingUnitError(state: AgentUnitState, lastError: string | undefined): AgentError {
  const result = state.result === undefined ? '' : ` (${state.result})`;
  const restarts = state.restarts === undefined ? '' : `, ${state.restarts} restarts so far`;
  const how =
    state.activeState === 'failed'
      ? `failed${result}`
      : `restarting after a failure${result}${restarts}`;
  const why = lastError === undefined ? '' : `; its last error: ${lastError}`;
  return new AgentError(
    'DAEMON_UNREACHABLE',
    `the agent unit ${unitNames.agent} is ${how}, so nothing answers on ${hostPaths.socket}${why}`,
    {
      path: hostPaths.socket,
      hint: `read why with \`journalctl -u ${unitNames.agent} -n 50\`, fix it, then run \`systemctl reset-failed ${unitNames.agent}\` and \`systemctl restart ${unitNames.agent}\``,
    },
  );
}

/** The agent unit's last error line in the journal (its last line if none says `error`). */
export async function lastAgentError(): Promise<string | undefined> {
  const result = await runBuiltin(
    'journalctl',
    ['--unit', unitNames.agent, '--lines', '30', '--output', 'cat', '--no-pager', '--quiet'],
    5_000,
  ).catch(() => undefined);
  if (result?.exitCode !== 0) return undefined;
  const lines = result.stdout.split('\n').filter((line) => line.trim() !== '');
  const last = lines.findLast((line) => /^error: |"level":50|"level":60/.test(line));
  return last ?? lines.at(-1);
}

/**
 * Watches the agent unit while a command waits for the daemon: after
 * `afterMs` (so an answering daemon costs nothing but a timer) and then
 * every `intervalMs`, and calls `onFailing` once with the unit's error when
 * the unit is failing. Returns the function that stops the watch.
 */
export function watchAgentUnit(
  onFailing: (error: AgentError) => void,
  { afterMs = 1_000, intervalMs = 1_000 } = {},
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    const state = await readAgentUnitState();
    if (stopped) return;
    if (state !== undefined && isFailing(state)) {
      onFailing(failingUnitError(state, await lastAgentError()));
      return;
    }
    timer = setTimeout(() => void check(), intervalMs);
  };
  timer = setTimeout(() => void check(), afterMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
