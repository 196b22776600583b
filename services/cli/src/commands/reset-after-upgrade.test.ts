import { exitCodeFor, exitCodes } from '@aks-flex-node/api';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { resetAfterUpgrade, type UpgradeInFlight } from './reset-after-upgrade.js';

/** A clock that moves only when slept on. */
function fakeClock() {
  let now = 0;
  return { now: () => now, sleep: (ms: number) => Promise.resolve(void (now += ms)) };
}

const busy = () => new AgentError('ACTIVATION_IN_PROGRESS', 'activation in progress: held');
const switched: UpgradeInFlight = {
  operationName: 'upgrade-1',
  signalFile: '/etc/aks-flex-node/agent-upgrade-signal.json',
  isSwitched: true,
};

/** A reset refused while `inFlight(now)` says an upgrade is there, done once it is gone. */
function host(inFlight: (now: number) => UpgradeInFlight | undefined, clock = fakeClock()) {
  const attempts: number[] = [];
  const lines: string[] = [];
  const run = (waitMs?: number) =>
    resetAfterUpgrade({
      attempt: () => {
        attempts.push(clock.now());
        return inFlight(clock.now()) === undefined
          ? Promise.resolve('reset')
          : Promise.reject(busy());
      },
      upgradeInFlight: () => Promise.resolve(inFlight(clock.now())),
      onWaiting: (line) => lines.push(line),
      clock,
      ...(waitMs === undefined ? {} : { waitMs }),
    });
  return { run, attempts, lines };
}

describe('reset waits for an AgentUpgrade in flight (issue#28.3)', () => {
  it('issue#28.3 waits for the judgement, showing what it waits for, then resets', async () => {
    // Judged 7 s after the reset was first asked for.
    const h = host((now) => (now < 7_000 ? switched : undefined));
    await expect(h.run()).resolves.toBe('reset');
    expect(h.attempts.at(-1)).toBeGreaterThanOrEqual(7_000);
    expect(h.attempts.at(-1)).toBeLessThan(7_500);
    // Shown at once, then every 5 s, never silent and never per poll.
    expect(h.lines).toHaveLength(2);
    expect(h.lines[0]).toContain('waiting for AgentUpgrade upgrade-1 to be judged');
  });

  it('issue#28.3 gives up at the bound with the refusal (exit 4) that names the upgrade and the command to run', async () => {
    const h = host(() => switched);
    const error: unknown = await h.run(30_000).catch((e: unknown) => e);
    expect(isAgentError(error, 'ACTIVATION_IN_PROGRESS')).toBe(true);
    expect(isAgentError(error) && exitCodeFor(error.code)).toBe(exitCodes.busy.code);
    expect(isAgentError(error) && error.message).toMatch(/upgrade-1 .* after 30 s/);
    expect(isAgentError(error) && error.hint).toContain('recover-agent-upgrade');
    expect(h.attempts.at(-1)).toBeLessThanOrEqual(30_250);
  });

  it('a busy lock with no upgrade behind it (a move, another reset) is refused at once, as before', async () => {
    const attempts: number[] = [];
    const lines: string[] = [];
    const error: unknown = await resetAfterUpgrade({
      attempt: () => {
        attempts.push(0);
        return Promise.reject(busy());
      },
      upgradeInFlight: () => Promise.resolve(undefined),
      onWaiting: (line) => lines.push(line),
      clock: fakeClock(),
    }).catch((e: unknown) => e);
    expect(isAgentError(error, 'ACTIVATION_IN_PROGRESS')).toBe(true);
    expect(attempts).toHaveLength(1);
    expect(lines).toEqual([]);
  });

  it('after the judgement, the activations that follow it (the next daemon start checks) are waited out too', async () => {
    const clock = fakeClock();
    let tries = 0;
    const result = await resetAfterUpgrade({
      attempt: () => {
        tries += 1;
        // Judged at 2 s; the daemon's move check then holds the lock until 3 s.
        return clock.now() < 3_000 ? Promise.reject(busy()) : Promise.resolve('reset');
      },
      upgradeInFlight: () => Promise.resolve(clock.now() < 2_000 ? switched : undefined),
      onWaiting: () => undefined,
      clock,
    });
    expect(result).toBe('reset');
    expect(tries).toBeGreaterThan(8);
  });

  it('any other error is passed on at once', async () => {
    const error: unknown = await resetAfterUpgrade({
      attempt: () => Promise.reject(new AgentError('SYSTEMD_FAILED', 'systemctl stop exited 1')),
      upgradeInFlight: () => Promise.resolve(switched),
      onWaiting: () => undefined,
      clock: fakeClock(),
    }).catch((e: unknown) => e);
    expect(isAgentError(error, 'SYSTEMD_FAILED')).toBe(true);
  });
});
