import type { Operation } from '@aks-flex-node/api';
import { AgentError, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { awaitUpgradeResult, type UpgradeResultSources } from './await-upgrade-result.js';

const id = 'upgrade-20261203-abcd';
const succeeded: Operation = {
  id,
  kind: 'agent-upgrade',
  state: 'succeeded',
  phase: 'judged',
  startedAt: '2026-12-03T13:00:00Z',
  finishedAt: '2026-12-03T13:00:09Z',
};
const restarting: Operation = { ...succeeded, state: 'restarting', phase: 'judging' };
const unreachable = () =>
  new AgentError('DAEMON_UNREACHABLE', 'the daemon did not answer: the socket does not exist');

/** A clock that moves only when slept on, or when a request takes its time. */
function fakeClock() {
  let now = 0;
  return {
    now: () => now,
    sleep: (ms: number) => Promise.resolve(void (now += ms)),
    pass: (ms: number) => void (now += ms),
  };
}

/** The host as a timeline: what the daemon answers, and what is on disk, at each moment. */
function host(
  clock: ReturnType<typeof fakeClock>,
  at: (now: number) => {
    daemon: Operation | 'gone' | 'hangs';
    signalled: boolean;
    record?: Operation;
  },
): UpgradeResultSources & { asks: number[] } {
  const asks: number[] = [];
  return {
    asks,
    ask: (_id, timeoutMs) => {
      asks.push(timeoutMs);
      const { daemon } = at(clock.now());
      if (daemon === 'hangs') {
        // A socket that holds the request until the client gives up.
        clock.pass(timeoutMs);
        return Promise.reject(
          new AgentError('DAEMON_UNREACHABLE', `no answer within ${timeoutMs} ms`),
        );
      }
      return daemon === 'gone' ? Promise.reject(unreachable()) : Promise.resolve(daemon);
    },
    isSignalled: () => Promise.resolve(at(clock.now()).signalled),
    readRecord: () => Promise.resolve(at(clock.now()).record),
  };
}

describe('the CLI follows an AgentUpgrade to its end (issue#22.6)', () => {
  it('issue#22.6 a reset stops the daemon after the judgement: the record on disk is the result, read at once', async () => {
    const clock = fakeClock();
    // The restarted daemon answers "restarting" until 4 s; a reset then stops it
    // once it has recorded the success, before this CLI asked again.
    const sources = host(clock, (now) =>
      now < 4_000
        ? { daemon: restarting, signalled: true }
        : { daemon: 'gone', signalled: false, record: succeeded },
    );
    const notes: string[] = [];
    const result = await awaitUpgradeResult(id, sources, {
      timeoutMs: 300_000,
      onNote: (line) => notes.push(line),
      clock,
    });
    expect(result).toEqual(succeeded);
    expect(clock.now()).toBeLessThan(5_000);
    expect(notes).toEqual([`AgentUpgrade ${id} is restarting (judging); waiting for its result`]);
  });

  it('issue24#tty says the phase only where it adds to the state: restarting, then restarting (judging)', async () => {
    const clock = fakeClock();
    const queued: Operation = { ...succeeded, state: 'restarting', phase: 'restarting' };
    const sources = host(clock, (now) =>
      now < 1_000
        ? { daemon: queued, signalled: true }
        : now < 2_000
          ? { daemon: restarting, signalled: true }
          : { daemon: succeeded, signalled: false },
    );
    const notes: string[] = [];
    await awaitUpgradeResult(id, sources, {
      timeoutMs: 300_000,
      onNote: (line) => notes.push(line),
      clock,
    });
    expect(notes).toEqual([
      `AgentUpgrade ${id} is restarting; waiting for its result`,
      `AgentUpgrade ${id} is restarting (judging); waiting for its result`,
    ]);
  });

  it('issue#22.6 no daemon, no signal and no record: reported as ended within seconds, not after --timeout', async () => {
    const clock = fakeClock();
    const sources = host(clock, (now) =>
      now < 1_000 ? { daemon: 'gone', signalled: true } : { daemon: 'gone', signalled: false },
    );
    const notes: string[] = [];
    const error: unknown = await awaitUpgradeResult(id, sources, {
      timeoutMs: 300_000,
      onNote: (line) => notes.push(line),
      clock,
    }).catch((e: unknown) => e);
    expect(isAgentError(error, 'NOT_FOUND')).toBe(true);
    expect(isAgentError(error) && error.message).toContain('ended without a result');
    expect(clock.now()).toBeLessThan(5_000);
    expect(notes[0]).toContain('waiting for the restarted agent to judge it');
  });

  it('a daemon that does not know the operation (NOT_FOUND) is not the end while the signal still names it', async () => {
    const clock = fakeClock();
    const notFound = () => Promise.reject(new AgentError('NOT_FOUND', `no operation ${id}`));
    const sources: UpgradeResultSources = {
      ask: () => (clock.now() < 6_000 ? notFound() : Promise.resolve(succeeded)),
      isSignalled: () => Promise.resolve(true),
      readRecord: () => Promise.resolve(undefined),
    };
    await expect(
      awaitUpgradeResult(id, sources, { timeoutMs: 60_000, onNote: () => undefined, clock }),
    ).resolves.toEqual(succeeded);
  });

  it('issue#22.6 never waits past --timeout, even when each request is held until it times out', async () => {
    const clock = fakeClock();
    const sources = host(clock, () => ({ daemon: 'hangs', signalled: true }));
    const error: unknown = await awaitUpgradeResult(id, sources, {
      timeoutMs: 12_000,
      onNote: () => undefined,
      clock,
    }).catch((e: unknown) => e);
    expect(isAgentError(error, 'OPERATION_TIMED_OUT')).toBe(true);
    expect(isAgentError(error) && error.message).toContain('did not finish within 12 s');
    // issue#24.2: the upgrade goes on, and the hint runs as printed.
    expect(isAgentError(error) && error.message).toContain('it goes on');
    expect(isAgentError(error) && error.hint).toBe(
      `follow it with \`/opt/unbounded/agent/bin/aks-flex-node operations ${id}\``,
    );
    expect(clock.now()).toBeLessThanOrEqual(12_000);
    expect(Math.max(...sources.asks)).toBeLessThanOrEqual(5_000);
  });

  it('an error that is not about reaching the daemon is passed on', async () => {
    const clock = fakeClock();
    const sources: UpgradeResultSources = {
      ask: () => Promise.reject(new AgentError('INVALID_ARGUMENT', 'bad id')),
      isSignalled: () => Promise.resolve(false),
      readRecord: () => Promise.resolve(undefined),
    };
    const error: unknown = await awaitUpgradeResult(id, sources, {
      timeoutMs: 60_000,
      onNote: () => undefined,
      clock,
    }).catch((e: unknown) => e);
    expect(isAgentError(error, 'INVALID_ARGUMENT')).toBe(true);
  });
});
