import { setTimeout as sleep } from 'node:timers/promises';
import { type PollClock } from '@aks-flex-node/fs';
import { isAgentError } from '@aks-flex-node/log';
import { unjudgedUpgradeRefusal } from '@aks-flex-node/reset';

/**
 * How long `reset` waits for an AgentUpgrade in flight. An upgrade's switch,
 * restart and judgement take seconds (the 3 s stability interval, the
 * guard's 10 s deadline, one more restart for a rollback); the rest covers
 * a slow download before the switch.
 */
export const upgradeWaitMs = 120_000;

/** An AgentUpgrade in flight, as the signal records it. */
export interface UpgradeInFlight {
  operationName: string;
  signalFile: string;
  /** Whether `current` already names its candidate: only a judgement (or recovery) ends it. */
  isSwitched: boolean;
}

/** What {@link resetAfterUpgrade} needs; tests pass fakes. */
export interface ResetAfterUpgradeDeps<T> {
  /** One reset, through the daemon or offline; refused with ACTIVATION_IN_PROGRESS when busy. */
  attempt: () => Promise<T>;
  /** The upgrade the signal records now, read through its one reader. */
  upgradeInFlight: () => Promise<UpgradeInFlight | undefined>;
  /** Shows the wait: a reset that waits in silence looks hung. */
  onWaiting: (line: string) => void;
  waitMs?: number;
  intervalMs?: number;
  clock?: PollClock;
}

const realClock: PollClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };
const noteEveryMs = 5_000;

/**
 * Runs the reset; while it is refused because an AgentUpgrade is in flight
 * (its signal exists: staging under the lock, or switched and waiting for
 * the restarted daemon's judgement), waits for the upgrade to end and tries
 * again, up to `waitMs`, showing what it waits for. The check that refuses
 * runs under the activation lock (daemon and offline alike), so the reset
 * that finally runs cannot slip in before a judgement. A busy lock with no
 * upgrade behind it (a move, another reset) is refused at once, as before;
 * once it has waited for an upgrade it also waits out the activations that
 * follow the judgement (the next daemon's start checks, a rollback's
 * restart). Throws ACTIVATION_IN_PROGRESS (exit 4) when the time is up.
 */
export async function resetAfterUpgrade<T>(deps: ResetAfterUpgradeDeps<T>): Promise<T> {
  const clock = deps.clock ?? realClock;
  const waitMs = deps.waitMs ?? upgradeWaitMs;
  const started = clock.now();
  let waitedFor: UpgradeInFlight | undefined;
  let noted = -Infinity;
  for (;;) {
    try {
      return await deps.attempt();
    } catch (error) {
      if (!isAgentError(error, 'ACTIVATION_IN_PROGRESS')) throw error;
      const upgrade = await deps.upgradeInFlight();
      if (upgrade === undefined && waitedFor === undefined) throw error;
      const waited = clock.now() - started;
      if (waited >= waitMs) {
        throw upgrade?.isSwitched === true ? unjudgedUpgradeRefusal(upgrade, waited) : error;
      }
      if (upgrade !== undefined) {
        if (
          upgrade.operationName !== waitedFor?.operationName ||
          clock.now() - noted >= noteEveryMs
        ) {
          deps.onWaiting(describeWait(upgrade, waited, waitMs));
          noted = clock.now();
        }
        waitedFor = upgrade;
      }
      await clock.sleep(deps.intervalMs ?? 250);
    }
  }
}

function describeWait(upgrade: UpgradeInFlight, waitedMs: number, waitMs: number): string {
  const what = upgrade.isSwitched ? 'to be judged' : 'to switch and be judged';
  return `waiting for AgentUpgrade ${upgrade.operationName} ${what} before the reset (${Math.round(waitedMs / 1000)} s of at most ${waitMs / 1000} s)`;
}
