import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fastify } from 'fastify';
import { holdSingleInstance } from '@aks-flex-node/lock';
import { createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createStopRequest, runDaemon, type DaemonOptions } from './run-daemon.js';

const version = { version: '1.2.3', commit: 'abc', arch: 'x64', node: '24', capabilities: [] };

/** A daemon's options over a temp socket path; `seen` records the lifecycle steps in order. */
async function daemonOptions(overrides: Partial<DaemonOptions> = {}) {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'run-daemon-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const socket = path.join(tmp, 'agent.sock');
  const daemonLock = path.join(tmp, 'daemon.lock');
  const seen: string[] = [];
  let stop: (reason: string) => void = () => undefined;
  const options: DaemonOptions = {
    paths: { socket, daemonLock },
    log: createSilentLogger(),
    version,
    stabilityMs: 10,
    // Not V8's: a last-resort collection in the test worker only slows it.
    collectGarbage: () => undefined,
    holdYoungGeneration: () => undefined,
    stopSignal: new Promise<string>((resolve) => (stop = resolve)),
    prepareHost: () => {
      seen.push('prepare');
      return Promise.resolve();
    },
    startSequence: () => {
      seen.push('judge');
      return Promise.resolve(undefined);
    },
    upgrades: {
      drain: () => {
        seen.push('drain');
        return Promise.resolve();
      },
    },
    reset: {
      drain: () => {
        seen.push('drain reset');
        return Promise.resolve();
      },
    },
    buildApp: (daemon) => {
      seen.push(`build ${daemon.socket}`);
      const app = fastify();
      app.get('/v1/ping', () => ({ pid: daemon.pid }));
      return Promise.resolve(app);
    },
    ...overrides,
  };
  return {
    options,
    seen,
    socket,
    daemonLock,
    stop: (reason: string) => {
      stop(reason);
    },
  };
}

function get(socketPath: string, route: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: route }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => {
          resolve(body);
        });
      })
      .on('error', reject);
  });
}

describe('runDaemon', () => {
  it('serves on a self-bound socket once the host is prepared, judges after the stability interval, and exits 0 on stop', async () => {
    const { options, seen, socket, daemonLock, stop } = await daemonOptions();
    const running = runDaemon(options);
    await expect.poll(() => seen.includes('judge')).toBe(true);
    expect(JSON.parse(await get(socket, '/v1/ping'))).toEqual({ pid: process.pid });
    stop('SIGTERM');
    expect(await running).toBe(0);
    expect(seen).toEqual(['prepare', 'build self-bound', 'judge', 'drain', 'drain reset']);
    // The guard is released: another daemon may start now.
    const guard = await holdSingleInstance(daemonLock, socket);
    await guard.release();
  });

  it('collects garbage once, after the start sequence has settled, then holds the young generation, and neither when stopped before it', async () => {
    const noted = (seen: string[], step: string) => () => seen.push(step);
    const started = await daemonOptions();
    started.options.collectGarbage = noted(started.seen, 'collect');
    started.options.holdYoungGeneration = noted(started.seen, 'hold');
    const running = runDaemon(started.options);
    await expect.poll(() => started.seen).toContain('hold');
    started.stop('SIGTERM');
    await expect(running).resolves.toBe(0);
    expect(
      started.seen.filter((step) => step === 'judge' || step === 'collect' || step === 'hold'),
    ).toEqual(['judge', 'collect', 'hold']);

    const stopped = await daemonOptions({ stabilityMs: 60_000 });
    stopped.options.collectGarbage = noted(stopped.seen, 'collect');
    stopped.options.holdYoungGeneration = noted(stopped.seen, 'hold');
    const early = runDaemon(stopped.options);
    await expect.poll(() => stopped.seen).toContain('build self-bound');
    stopped.stop('SIGTERM');
    await expect(early).resolves.toBe(0);
    expect(stopped.seen).not.toContain('collect');
    expect(stopped.seen).not.toContain('hold');
  });

  it('a second daemon on the same socket refuses before it prepares the host', async () => {
    const { options, seen, socket, daemonLock } = await daemonOptions();
    const first = await holdSingleInstance(daemonLock, socket);
    onTestFinished(() => first.release());
    await expect(runDaemon(options)).rejects.toMatchObject({ code: 'DAEMON_RUNNING' });
    expect(seen).toEqual([]);
  });

  it('a refusal while preparing the host is fatal: nothing is served and the guard is released', async () => {
    const refusal = new Error('seed copy does not run: noexec');
    const { options, seen, socket, daemonLock } = await daemonOptions({
      prepareHost: () => Promise.reject(refusal),
    });
    await expect(runDaemon(options)).rejects.toBe(refusal);
    expect(seen).toEqual([]);
    const guard = await holdSingleInstance(daemonLock, socket);
    await guard.release();
  });

  it('exits 1 when the start sequence held the gate shut and was not replaced in time', async () => {
    const { options, seen } = await daemonOptions({
      startSequence: () => {
        seen.push('judge');
        return Promise.resolve('the daemon queued its restart from the host root');
      },
    });
    expect(await runDaemon(options)).toBe(1);
    expect(seen).toEqual(['prepare', 'build self-bound', 'judge', 'drain', 'drain reset']);
  });

  it('a stop while the start sequence holds aborts its wait and exits 0', async () => {
    let aborted = false;
    const { options, seen, stop } = await daemonOptions({
      startSequence: async (stopped) => {
        seen.push('judge');
        await new Promise((resolve) => {
          stopped.addEventListener('abort', resolve);
        });
        aborted = stopped.aborted;
        return undefined;
      },
    });
    const running = runDaemon(options);
    await expect.poll(() => seen.includes('judge')).toBe(true);
    stop('SIGTERM');
    expect(await running).toBe(0);
    expect(aborted).toBe(true);
  });

  it('a stop asked for before the judgement cancels it', async () => {
    const { options, seen, stop } = await daemonOptions({ stabilityMs: 60_000 });
    const running = runDaemon(options);
    await expect.poll(() => seen.includes('build self-bound')).toBe(true);
    stop('SIGINT');
    expect(await running).toBe(0);
    expect(seen).toEqual(['prepare', 'build self-bound', 'drain', 'drain reset']);
  });
});

describe('runDaemon: shutdown', () => {
  it('a failed start sequence is not fatal: the daemon keeps serving and exits 0 on stop', async () => {
    const { options, seen, socket, stop } = await daemonOptions({
      startSequence: () => {
        seen.push('judge');
        return Promise.reject(new Error('judging failed: the signal is unreadable'));
      },
    });
    const running = runDaemon(options);
    await expect.poll(() => seen.includes('judge')).toBe(true);
    expect(JSON.parse(await get(socket, '/v1/ping'))).toEqual({ pid: process.pid });
    stop('SIGTERM');
    expect(await running).toBe(0);
  });

  it('an upgrade still running at stop is awaited before the daemon exits, after the socket closed', async () => {
    let finishUpgrade: () => void = () => undefined;
    const upgradeDone = new Promise<void>((resolve) => (finishUpgrade = resolve));
    const { options, seen, socket, stop } = await daemonOptions({
      upgrades: {
        drain: async () => {
          seen.push('drain');
          await upgradeDone;
          seen.push('drained');
        },
      },
    });
    let exited = false;
    const running = runDaemon(options).finally(() => (exited = true));
    await expect.poll(() => seen.includes('judge')).toBe(true);
    stop('SIGTERM');
    await expect.poll(() => seen.includes('drain')).toBe(true);
    // Closed before the drain: no new request reaches a daemon on its way out.
    await expect(get(socket, '/v1/ping')).rejects.toThrow();
    expect(exited).toBe(false);
    finishUpgrade();
    expect(await running).toBe(0);
    expect(seen.slice(-3)).toEqual(['drain', 'drain reset', 'drained']);
  });

  it('a request in flight when the stop arrives is answered before the daemon exits', async () => {
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { options, seen, socket, stop } = await daemonOptions({
      buildApp: (daemon) => {
        seen.push(`build ${daemon.socket}`);
        const app = fastify();
        app.get('/v1/slow', async () => {
          seen.push('request');
          await answered;
          return { done: true };
        });
        return Promise.resolve(app);
      },
    });
    const running = runDaemon(options);
    await expect.poll(() => seen.includes('judge')).toBe(true);
    const inFlight = get(socket, '/v1/slow');
    await expect.poll(() => seen.includes('request')).toBe(true);
    stop('SIGTERM');
    answer();
    expect(JSON.parse(await inFlight)).toEqual({ done: true });
    expect(await running).toBe(0);
  });
});

describe('createStopRequest', () => {
  it.each([
    ['the external signal', 'external', 'SIGTERM'],
    ['a stop the daemon asks for itself', 'internal', 'restart into current'],
  ] as const)('stops on %s, whichever comes first', async (_name, which, reason) => {
    let external: (value: string) => void = () => undefined;
    const stop = createStopRequest(new Promise<string>((resolve) => (external = resolve)));
    if (which === 'external') external(reason);
    else stop.request(reason);
    expect(await stop.requested).toBe(reason);
  });
});
