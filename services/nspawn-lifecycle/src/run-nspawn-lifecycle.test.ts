import http from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPaths } from '@aks-flex-node/layout';
import { nspawnLifecycleStateFile } from './post-start.js';
import { runNspawnLifecycle, type NspawnLifecycleOptions } from './run-nspawn-lifecycle.js';

interface Received {
  method: string;
  url: string;
  body: string;
}

let tmp: string;
let socketPath: string;
let server: http.Server | undefined;
let received: Received[];
let logged: string[];
let systemctlCalls: string[][];

/** A stand-in daemon on a real Unix socket that answers every request with `status` and `body`. */
async function serve(status: number, body: unknown, options: { hang?: boolean } = {}) {
  server = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', body: text });
      if (options.hang === true) return;
      response.writeHead(status, {
        'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
      });
      response.end(JSON.stringify(body));
    });
  });
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(socketPath, resolve));
}

function options(overrides: Partial<NspawnLifecycleOptions> = {}): Partial<NspawnLifecycleOptions> {
  return {
    socketPath,
    stateDir: path.join(tmp, 'etc/unbounded/agent'),
    timeoutMs: 2_000,
    systemctl: {
      restart: (unit) => {
        systemctlCalls.push(['restart', unit]);
        return Promise.resolve();
      },
    },
    sink: { write: (text: string) => logged.push(text) },
    stdout: { write: (text: string) => logged.push(text) },
    ...overrides,
  };
}

/** The hook's journal lines, decoded. */
function lines(): Record<string, unknown>[] {
  return logged.map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'nspawn-hook-'));
  socketPath = path.join(tmp, 'agent.sock');
  received = [];
  logged = [];
  systemctlCalls = [];
});
afterEach(async () => {
  const running = server;
  server = undefined;
  if (running !== undefined) {
    running.closeAllConnections();
    await new Promise<void>((resolve) => {
      running.close(() => {
        resolve();
      });
    });
  }
  await rm(tmp, { recursive: true, force: true });
});

describe('nspawn-lifecycle', () => {
  it.each(['pre-start', 'post-start', 'reconcile'])(
    'daemon#94 %s not-a-machine is refused with the exact message before anything runs',
    async (phase) => {
      await serve(200, {});
      await expect(runNspawnLifecycle([phase, 'not-a-machine'], options())).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: 'unknown nspawn machine "not-a-machine"',
      });
      expect(received).toEqual([]);
      expect(systemctlCalls).toEqual([]);
      expect(logged).toEqual([]);
    },
  );

  it.each([
    [[], 'needs a phase and a machine'],
    [['start', 'kube1'], 'unknown nspawn-lifecycle phase "start"'],
    [['pre-start'], 'takes exactly one machine'],
    [['pre-start', 'kube1', 'kube2'], 'takes exactly one machine'],
  ])('daemon#93 refuses the command line %j', async (args, message) => {
    await expect(runNspawnLifecycle(args, options())).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(message) as string,
    });
  });

  it('prints its usage for --help', async () => {
    expect(await runNspawnLifecycle(['--help'], options())).toBe(0);
    expect(logged.join('')).toContain('pre-start|post-start|reconcile MACHINE');
  });

  describe('pre-start', () => {
    it('asks the daemon to regenerate the machine hooks and logs what it answered', async () => {
      await serve(200, {
        machine: 'kube2',
        migratedFrom: 'linked',
        root: '/opt/unbounded/agent',
        helper: '/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
        changed: true,
        reloaded: true,
      });
      expect(await runNspawnLifecycle(['pre-start', 'kube2'], options())).toBe(0);
      expect(received).toEqual([
        { method: 'POST', url: '/v1/nspawn-machines/kube2/hooks', body: '{}' },
      ]);
      expect(lines()).toMatchObject([
        {
          level: 30,
          phase: 'pre-start',
          machine: 'kube2',
          changed: true,
          msg: expect.stringContaining(
            '/opt/unbounded/agent/bin/unbounded-agent-nspawn-lifecycle',
          ) as string,
        },
      ]);
    });

    it('daemon#100 with no daemon, the machine keeps its config: exit 0 and the reason logged', async () => {
      expect(await runNspawnLifecycle(['pre-start', 'kube1'], options())).toBe(0);
      const [line] = lines();
      expect(line).toMatchObject({ level: 40, phase: 'pre-start', machine: 'kube1' });
      expect(line?.msg).toBe(
        `not running the nspawn lifecycle phase: no daemon answered on ${socketPath} (the socket does not exist); the machine keeps its config`,
      );
    });

    it('when the daemon refuses (the host root cannot be migrated), exit 0 with its reason', async () => {
      await serve(409, {
        type: 'urn:aks-flex-node:error:HOST_ROOT_REFUSED',
        title: 'HOST_ROOT_REFUSED',
        status: 409,
        code: 'HOST_ROOT_REFUSED',
        detail:
          'installed under both /usr/local and /opt/unbounded/agent; run reset, then install again',
        hint: 'run reset',
      });
      expect(await runNspawnLifecycle(['pre-start', 'kube1'], options())).toBe(0);
      expect(lines()).toMatchObject([
        {
          level: 40,
          code: 'HOST_ROOT_REFUSED',
          hint: 'run reset',
          msg: expect.stringMatching(
            /^not running the nspawn lifecycle phase: the daemon refused: installed under both .*; the machine keeps its config$/,
          ) as string,
        },
      ]);
    });

    it('a daemon that never answers is given up on after the timeout, exit 0', async () => {
      await serve(200, {}, { hang: true });
      // Given up on by its own timeout (the message names it), not the test's.
      expect(await runNspawnLifecycle(['pre-start', 'kube1'], options({ timeoutMs: 300 }))).toBe(0);
      expect(lines()[0]?.msg).toContain('no answer within 300 ms');
    });

    it('on a terminal it writes a plain warning line', async () => {
      logged = [];
      const sink = { isTTY: true, write: (text: string) => logged.push(text) };
      expect(await runNspawnLifecycle(['pre-start', 'kube1'], options({ sink }))).toBe(0);
      expect(logged).toEqual([
        `warning: not running the nspawn lifecycle phase: no daemon answered on ${socketPath} (the socket does not exist); the machine keeps its config\n`,
      ]);
    });
  });

  describe('post-start', () => {
    it('daemon#98 with no lifecycle state there is nothing to rewire, and no daemon is asked', async () => {
      await serve(200, {});
      expect(await runNspawnLifecycle(['post-start', 'kube1'], options())).toBe(0);
      expect(received).toEqual([]);
      expect(lines()[0]).toMatchObject({
        level: 30,
        msg: 'no lifecycle state for kube1; no GPU devices to rewire',
      });
    });

    it('a CPU machine state has nothing to rewire; a GPU one is logged as not rewired', async () => {
      const dir = path.join(tmp, 'etc/unbounded/agent');
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, 'kube1-nspawn-lifecycle.json'),
        '{"version":1,"machine":"kube1"}',
      );
      await writeFile(
        path.join(dir, 'kube2-nspawn-lifecycle.json'),
        '{"version":1,"machine":"kube2","nvidia":{"devices":["/dev/nvidia0"]}}',
      );
      expect(await runNspawnLifecycle(['post-start', 'kube1'], options())).toBe(0);
      expect(await runNspawnLifecycle(['post-start', 'kube2'], options())).toBe(0);
      expect(lines().map((line) => [line.level, line.machine])).toEqual([
        [30, 'kube1'],
        [40, 'kube2'],
      ]);
    });

    it('daemon#114 the state is /etc/unbounded/agent/<machine>-nspawn-lifecycle.json', () => {
      expect(nspawnLifecycleStateFile(hostPaths.nspawnLifecycleStateDir, 'kube2')).toBe(
        '/etc/unbounded/agent/kube2-nspawn-lifecycle.json',
      );
    });

    it('daemon#113 a corrupt state is an error naming it', async () => {
      const dir = path.join(tmp, 'etc/unbounded/agent');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'kube1-nspawn-lifecycle.json'), '{not json');
      await expect(runNspawnLifecycle(['post-start', 'kube1'], options())).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('decode nspawn lifecycle state') as string,
      });
    });
  });

  describe('reconcile', () => {
    it('daemon#99 restarts the machine unit, with no daemon request', async () => {
      await serve(200, {});
      expect(await runNspawnLifecycle(['reconcile', 'kube2'], options())).toBe(0);
      expect(systemctlCalls).toEqual([['restart', 'systemd-nspawn@kube2.service']]);
      expect(received).toEqual([]);
    });

    it('a failed restart is SYSTEMD_FAILED with the unit named', async () => {
      const failing = {
        restart: () => Promise.reject(new Error('Unit systemd-nspawn@kube1.service not found.')),
      };
      await expect(
        runNspawnLifecycle(['reconcile', 'kube1'], options({ systemctl: failing })),
      ).rejects.toMatchObject({ code: 'SYSTEMD_FAILED', path: 'systemd-nspawn@kube1.service' });
    });
  });
});
