import { setTimeout as sleep } from 'node:timers/promises';
import { collectDiagnostics } from './diagnostics.js';
import type { Host } from './host.js';

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
  const properties = new Map(
    result.stdout
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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await readUnitState(host, unit);
    if (current.activeState === state) return current;
    if (Date.now() >= deadline) {
      const diagnostics = await collectDiagnostics(host, [unit]);
      throw new Error(
        `${unit} on ${host.name} did not become ${state} within ${timeoutMs / 1000} s ` +
          `(last: ActiveState=${current.activeState} SubState=${current.subState} Result=${current.result})\n` +
          diagnostics,
      );
    }
    await sleep(options.intervalMs ?? 250);
  }
}
