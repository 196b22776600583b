import { collectDiagnostics } from './diagnostics.js';
import type { Host } from './host.js';
import { shellPause } from './shell-pause.js';

/** systemd's ActiveState values. */
export type UnitActiveState =
  'active' | 'reloading' | 'inactive' | 'failed' | 'activating' | 'deactivating';

/** The unit properties a scenario asserts on or a timeout reports. */
export interface UnitState {
  readonly activeState: string;
  readonly subState: string;
  readonly result: string;
}

/** Reads a unit's current state from systemd. */
export async function readUnitState(host: Host, unit: string): Promise<UnitState> {
  const result = await host.run([
    'systemctl',
    'show',
    '--property=ActiveState,SubState,Result',
    '--',
    unit,
  ]);
  return parseUnitState(result.stdout);
}

/** `systemctl show`'s KEY=VALUE lines for the three properties. */
function parseUnitState(shown: string): UnitState {
  const properties = new Map(
    shown
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    activeState: properties.get('ActiveState') ?? 'unknown',
    subState: properties.get('SubState') ?? 'unknown',
    result: properties.get('Result') ?? 'unknown',
  };
}

/** Deadline and polling interval for {@link waitForUnitState}. */
export interface WaitForUnitStateOptions {
  /** Default 30 s. */
  readonly timeoutMs?: number;
  /** Default 250 ms. */
  readonly intervalMs?: number;
}

// The wait runs inside the host, one nsenter for the whole wait: a look from
// here was a fork of the test's worker, nsenter, env and timeout around each
// systemctl, four times a second, through every restart a scenario waits for.
const waitScript = String.raw`
${shellPause}
unit=$1 want=$2 interval=$3
while :; do
  seen=$(systemctl show --property=ActiveState,SubState,Result -- "$unit")
  if [[ $'\n'$seen$'\n' == *$'\n'"ActiveState=$want"$'\n'* ]]; then printf '%s\n' "$seen"; exit 0; fi
  nap "$interval"
done
`;

/**
 * Waits until the unit's ActiveState is `state`. It keeps waiting through
 * other states, `failed` included, because a unit under Restart= or
 * OnFailure= recovery passes through them on its way back. On the
 * deadline it throws an error whose message holds the last state, the
 * unit's journal and the layout tree, so the failure explains itself.
 */
export async function waitForUnitState(
  host: Host,
  unit: string,
  state: UnitActiveState,
  options: WaitForUnitStateOptions = {},
): Promise<UnitState> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const interval = String((options.intervalMs ?? 250) / 1000);
  const waited = await host.run(
    ['/bin/bash', '-c', waitScript, 'wait-for-unit-state', unit, state, interval],
    { timeoutMs },
  );
  // The state as the wait saw it, which may be a passing one (failed on the
  // way to a restart); on the deadline (exit 124), the last one, for the message.
  const current =
    waited.exitCode === 0 ? parseUnitState(waited.stdout) : await readUnitState(host, unit);
  if (current.activeState === state) return current;
  const diagnostics = await collectDiagnostics(host, [unit]);
  throw new Error(
    `${unit} on ${host.name} did not become ${state} within ${timeoutMs / 1000} s ` +
      `(last: ActiveState=${current.activeState} SubState=${current.subState} Result=${current.result})\n` +
      diagnostics,
  );
}
