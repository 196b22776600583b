import { chmod, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hostRootState, recordDigest, type MoveHost } from '@aks-flex-node/hostroot';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { AgentError, createLoggerCalling, createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { acquireActivationLock } from '@aks-flex-node/lock';
import { createMutationQueue } from '../mutation-queue.js';
import type { ReadUpgradeState } from '@aks-flex-node/agentbinary';
import { judgementNote, runStartSequence, type StartSequenceDeps } from './start-sequence.js';
import { createStartupGate, type StartupGate } from './startup-gate.js';

const log = createSilentLogger();

/**
 * A host as a release before the host root left it, migrated: blue/green
 * under `<tmp>/usr/local`, current → green, last-good → blue, the seed in
 * bin, and `<tmp>/opt/unbounded/agent` linked to `<tmp>/usr/local`.
 */
async function linkedHost(): Promise<{ paths: HostPaths; green: string; blue: string }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'start-sequence-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = hostPathsUnder(tmp);
  const lib = path.join(paths.legacy, 'lib/aks-flex-node');
  await mkdir(lib, { recursive: true });
  await mkdir(path.join(paths.legacy, 'bin'), { recursive: true });
  const blue = path.join(lib, 'aks-flex-node-blue');
  const green = path.join(lib, 'aks-flex-node-green');
  for (const [file, text] of [
    [blue, 'blue'],
    [green, 'green'],
    [paths.legacySeed, 'seed'],
  ] as const) {
    await writeFile(file, text);
    await chmod(file, 0o755);
  }
  await symlink(green, path.join(lib, 'aks-flex-node-current'));
  await symlink(blue, path.join(lib, 'aks-flex-node-last-good'));
  await mkdir(path.dirname(paths.root), { recursive: true });
  await symlink(paths.legacy, paths.root);
  await mkdir(path.dirname(paths.hostRootAgentDigests), { recursive: true });
  return { paths, green, blue };
}

interface Recorder extends MoveHost {
  exe: string;
  rewrites: string[];
  restarts: number;
  restartError?: Error;
}

function fakeMoveHost(exe: string): Recorder {
  const fake: Recorder = {
    exe,
    rewrites: [],
    restarts: 0,
    executable: () => Promise.resolve(fake.exe),
    relabel: () => Promise.resolve(),
    probeMount: (dir) => Promise.resolve({ noexec: false, mountPoint: path.dirname(dir) }),
    verify: () => Promise.resolve(),
    rewriteUnits: (root) => {
      fake.rewrites.push(root);
      return Promise.resolve();
    },
    queueRestart: () => {
      if (fake.restartError !== undefined) return Promise.reject(fake.restartError);
      fake.restarts += 1;
      return Promise.resolve();
    },
  };
  return fake;
}

function deps(
  paths: HostPaths,
  moveHost: MoveHost,
  overrides: Partial<StartSequenceDeps> = {},
): StartSequenceDeps & { gate: StartupGate; slept: number[] } {
  const slept: number[] = [];
  const built: StartSequenceDeps & { gate: StartupGate; slept: number[] } = {
    paths,
    log,
    gate: createStartupGate(),
    judge: () => Promise.resolve('no-signal'),
    queue: createMutationQueue({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
    }),
    moveHost,
    startupRoot: paths.legacy,
    holdMs: 120_000,
    retryMs: 10_000,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
    slept,
    ...overrides,
  };
  return built;
}

const running = () => new AbortController().signal;

describe('runStartSequence', () => {
  it('a daemon stopped while it judged (a reset stops it, then sweeps) moves nothing afterwards', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    await recordDigest(paths.hostRootAgentDigests, green);
    const host = fakeMoveHost(green);
    const stop = new AbortController();
    const d = deps(paths, host, {
      judge: () => {
        stop.abort();
        return Promise.resolve('no-signal');
      },
    });
    expect(await runStartSequence(d, stop.signal)).toBeUndefined();
    expect(await hostRootState(paths)).toBe('linked');
    expect(host.rewrites).toEqual([]);
    expect(host.restarts).toBe(0);
    expect(d.gate.view().gate).toBe('shut');
  });

  it('a daemon stopped while its judgement waits for a busy lock stops waiting at once, moves nothing and does not retry', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    await recordDigest(paths.hostRootAgentDigests, green);
    const host = fakeMoveHost(green);
    // Another process's activation (an offline recovery, say) holds the lock.
    const other = await acquireActivationLock({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'an offline recovery',
    });
    onTestFinished(() => other.release());
    const stop = new AbortController();
    const queue = createMutationQueue({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      // The daemon is stopped once the wait has begun, which the wait announces.
      log: createLoggerCalling('the activation lock is busy', () => {
        stop.abort();
      }),
    });
    let judged = false;
    const d = deps(paths, host, {
      queue,
      // As the daemon wires it: a minute's wait for the lock, polled every second.
      judge: (stopped) =>
        queue.runWhenFree(
          'judging the AgentUpgrade',
          () => {
            judged = true;
            return Promise.resolve('no-signal');
          },
          { timeoutMs: 60_000, signal: stopped },
        ),
    });
    // Without the signal reaching the wait this would take the full minute.
    expect(await runStartSequence(d, stop.signal)).toBeUndefined();
    expect(judged).toBe(false);
    expect(d.slept).toEqual([]);
    expect(await hostRootState(paths)).toBe('linked');
    expect(host.rewrites).toEqual([]);
    expect(d.gate.view().gate).toBe('shut');
  });

  it('a linked host whose last-good never recorded itself stays linked; the gate opens with the reason', async () => {
    const { paths, green } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, green);
    const d = deps(paths, fakeMoveHost(green));
    expect(await runStartSequence(d, running())).toBeUndefined();
    expect(await hostRootState(paths)).toBe('linked');
    const view = d.gate.view();
    expect(view).toMatchObject({ gate: 'open', move: 'not-ready' });
    expect(view.reason).toMatch(/last-good/);
    // Not released: the seed an earlier release needs stays.
    expect((await lstat(paths.legacySeed)).isFile()).toBe(true);
  });

  it('pass 1 queues the restart and holds the gate; not replaced in time, it asks to exit after two minutes', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const host = fakeMoveHost(green);
    const d = deps(paths, host);
    const reason = await runStartSequence(d, running());
    expect(reason).toBe(
      'the daemon queued its restart from the host root, and it was not restarted within 120s',
    );
    expect(d.slept).toEqual([120_000]);
    expect(host.restarts).toBe(1);
    expect(await hostRootState(paths)).toBe('moving');
    expect(d.gate.view()).toMatchObject({ gate: 'shut', move: 'restart-queued' });
    expect(d.gate.refusal('POST /v1/agent-upgrades')?.code).toBe('DAEMON_NOT_READY');
  });

  it('a stop while holding ends the wait without asking to exit non-zero', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const stop = new AbortController();
    const d = deps(paths, fakeMoveHost(green), {
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            reject(new Error('aborted'));
          });
          stop.abort();
        }),
    });
    expect(await runStartSequence(d, stop.signal)).toBeUndefined();
    expect(d.gate.view().gate).toBe('shut');
  });

  it('pass 2 from the copy finishes the move, removes the legacy seed, and opens the gate', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const host = fakeMoveHost(green);
    await runStartSequence(deps(paths, host), running());
    host.exe = path.join(paths.root, 'lib/aks-flex-node/aks-flex-node-green');
    const second = deps(paths, host, { startupRoot: paths.root });
    const rewritesBefore = host.rewrites.length;
    expect(await runStartSequence(second, running())).toBeUndefined();
    expect(await hostRootState(paths)).toBe('installed');
    expect(second.gate.view()).toEqual({ gate: 'open', move: 'moved' });
    await expect(lstat(paths.legacySeed)).rejects.toMatchObject({ code: 'ENOENT' });
    // Once before the legacy files go (they are still in use), once after,
    // so the units stop naming the legacy root.
    expect(host.rewrites.slice(rewritesBefore)).toEqual([paths.root, paths.root]);
  });

  it('a swap whose restart could not be queued keeps the gate shut and exits after the hold', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const host = fakeMoveHost(green);
    host.restartError = new AgentError('SYSTEMD_FAILED', 'systemctl restart failed');
    const d = deps(paths, host);
    const reason = await runStartSequence(d, running());
    expect(await hostRootState(paths)).toBe('moving');
    expect(reason).toMatch(/has not finished, and it was not restarted within 120s$/);
    expect(d.gate.view()).toMatchObject({ gate: 'shut', move: 'failed' });
  });

  it('an unfinished move found at start (pass 2 fails midway) keeps the gate shut', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const host = fakeMoveHost(green);
    await runStartSequence(deps(paths, host), running());
    host.exe = path.join(paths.root, 'lib/aks-flex-node/aks-flex-node-green');
    const rewriteFails: MoveHost = {
      ...host,
      rewriteUnits: () => Promise.reject(new AgentError('SYSTEMD_FAILED', 'daemon-reload failed')),
    };
    const d = deps(paths, rewriteFails, { startupRoot: paths.root });
    expect(await runStartSequence(d, running())).toMatch(/has not finished/);
    expect(await hostRootState(paths)).toBe('moving');
    // The seed stays until the move has finished.
    expect((await lstat(paths.legacySeed)).isFile()).toBe(true);
  });

  it('an activation holding the lock means no move this start; the gate opens', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const host = fakeMoveHost(green);
    const d = deps(paths, host, {
      queue: {
        run: () =>
          Promise.reject(new AgentError('ACTIVATION_IN_PROGRESS', 'activation in progress')),
      },
    });
    expect(await runStartSequence(d, running())).toBeUndefined();
    expect(d.gate.view()).toEqual({ gate: 'open', move: 'lock-busy' });
    expect(await hostRootState(paths)).toBe('linked');
  });

  it('issue22 a judgement that fails is retried after 10 s, then a growing wait, before anything moves', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    let calls = 0;
    const d = deps(paths, fakeMoveHost(green), {
      judge: () => {
        calls += 1;
        return calls < 5 ? Promise.reject(new Error('apiserver down')) : Promise.resolve('ok');
      },
      holdMs: 1,
      retryMaxMs: 40_000,
    });
    await runStartSequence(d, running());
    expect(calls).toBe(5);
    expect(d.slept.slice(0, 4)).toEqual([10_000, 20_000, 40_000, 40_000]);
  });

  it('issue22 a rollback that cannot finish says in status what failed and what repairs it, while it retries', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const seen: (string | undefined)[] = [];
    let calls = 0;
    const d = deps(paths, fakeMoveHost(green), {
      judge: () => {
        calls += 1;
        if (calls > 1) return Promise.resolve('rolled-back');
        return Promise.reject(
          new AgentError(
            'UPGRADE_FAILED',
            'the rollback of AgentUpgrade op-1 could not finish: EROFS',
            {
              hint: 'remount it read-write',
            },
          ),
        );
      },
      holdMs: 1,
    });
    const sleep = d.sleep;
    d.sleep = (ms, signal) => {
      seen.push(d.gate.view().reason);
      return sleep(ms, signal);
    };
    await runStartSequence(d, running());
    expect(seen[0]).toBe(
      'could not finish the pending AgentUpgrade: the rollback of AgentUpgrade op-1 could not finish: EROFS; to repair: remount it read-write; retrying in 10s',
    );
    // Once it converged the explanation is gone: the start went on to the move.
    expect(d.gate.view().reason).not.toMatch(/could not finish/);
  });

  it('issue21 once no upgrade is pending the machine copy is kept, and the gate does not wait for it', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    let kept = 0;
    const d = deps(paths, fakeMoveHost(green), {
      keepMachineCopy: () => {
        kept += 1;
      },
      holdMs: 1,
    });
    await runStartSequence(d, running());
    expect(kept).toBe(1);
  });

  it('a signal still pending after the judgement (recovery queued) keeps the gate shut with no deadline and moves nothing', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    await writeFile(
      paths.signalFile,
      JSON.stringify({ operationName: 'op-1', candidatePath: green, previousPath: blue }),
    );
    let kept = 0;
    const d = deps(paths, fakeMoveHost(green), {
      keepMachineCopy: () => {
        kept += 1;
      },
    });
    expect(await runStartSequence(d, running())).toBeUndefined();
    // The copy belongs to the pending upgrade until the next daemon judges it.
    expect(kept).toBe(0);
    expect(d.slept).toEqual([]);
    expect(d.gate.view().gate).toBe('shut');
    expect(d.gate.view().reason).toMatch(/AgentUpgrade is still pending/);
    expect(await hostRootState(paths)).toBe('linked');
    expect(await readFile(paths.signalFile, 'utf8')).toContain('op-1');
  });

  it('issue22#2 status says what the start does: no pending upgrade is claimed when none is, and a corrupt signal set aside is named once the gate opens', async () => {
    const { paths, green, blue } = await linkedHost();
    await recordDigest(paths.hostRootAgentDigests, blue);
    const reasons: (string | undefined)[] = [];
    const d = deps(paths, fakeMoveHost(green));
    d.judge = () => {
      reasons.push(d.gate.view().reason);
      return Promise.resolve('no-signal');
    };
    await runStartSequence(d, running());
    expect(reasons[0]).toMatch(/^the daemon is starting: no AgentUpgrade is pending/);

    // A second host: the first start above may have moved its files.
    const second = await linkedHost();
    await writeFile(second.paths.signalFile, '{garbage');
    const e = deps(second.paths, fakeMoveHost(second.green));
    e.judge = async (_stopped, onNote) => {
      reasons.push(e.gate.view().reason);
      await rm(second.paths.signalFile);
      onNote(`set a corrupt AgentUpgrade signal aside as ${second.paths.signalFile}.corrupt-1`);
      return 'no-signal';
    };
    await runStartSequence(e, running());
    expect(reasons[1]).toMatch(
      /^the daemon is starting: the AgentUpgrade signal is corrupt \(it is not valid JSON/,
    );
    expect(e.gate.view(), JSON.stringify(e.gate.view())).toMatchObject({ gate: 'open' });
    expect(e.gate.view().reason).toContain(
      `set a corrupt AgentUpgrade signal aside as ${second.paths.signalFile}.corrupt-1`,
    );
    for (const reason of reasons) expect(reason).not.toMatch(/judges a pending/);
  });
});

describe('judgementNote', () => {
  const signal = { operationName: 'op-7' };
  it.each([
    ['none', { kind: 'none' }, /^no AgentUpgrade is pending/],
    [
      'corrupt',
      { kind: 'corrupt', reason: 'it is empty' },
      /corrupt \(it is empty\); it sets it aside/,
    ],
    [
      'recorded',
      { kind: 'recorded', signal },
      /judges the pending AgentUpgrade op-7, interrupted before the switch/,
    ],
    ['staged', { kind: 'staged', signal, candidate: '/b' }, /op-7, interrupted before the switch/],
    [
      'switched',
      { kind: 'switched', signal, candidate: '/b' },
      /judges the pending AgentUpgrade op-7$/,
    ],
    [
      'committed',
      { kind: 'committed', signal, candidate: '/b', isCandidateCurrent: true },
      /judges the pending AgentUpgrade op-7$/,
    ],
    [
      'failed',
      {
        kind: 'failed',
        signal,
        failure: 'it crashed',
        before: 'committed',
        mustRunLastGood: true,
        isCandidateCurrent: true,
      },
      /finishes the failed AgentUpgrade op-7 \(it crashed\)/,
    ],
  ] satisfies [string, ReadUpgradeState, RegExp][])(
    'issue25 status names what the start does with a %s upgrade',
    (_kind, state, expected) => {
      expect(judgementNote(state)).toMatch(expected);
    },
  );
});
