import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { problemSchema, regenerateNspawnHooksResponseSchema } from '@aks-flex-node/api';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { acquireActivationLock, isActivationLockHeld } from '@aks-flex-node/lock';
import { createSilentLogger, isNotFound } from '@aks-flex-node/log';
import { nspawnHookFiles } from '@aks-flex-node/nspawn';
import { buildApp } from '../app.js';
import { createStartupGate, type StartupGate } from '../startup/startup-gate.js';
import { createMutationQueue } from '../mutation-queue.js';
import { createNspawnHooksService } from '../nspawn-hooks-service.js';
import { createOperationRegistry } from '../upgrade/operation-registry.js';

const unused = () => Promise.reject(new Error('not used by this test'));

let tmp: string;
let paths: HostPaths;
let app: FastifyInstance;
let reloads: number;
let queue: ReturnType<typeof createMutationQueue>;
let gate: StartupGate;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'nspawn-route-'));
  paths = hostPathsUnder(tmp);
  reloads = 0;
  gate = createStartupGate();
  const log = createSilentLogger();
  const executable = path.join(tmp, 'running-agent');
  await writeFile(executable, '#!/bin/sh\necho this-release\n', { mode: 0o755 });
  queue = createMutationQueue({
    lockPath: paths.activationLock,
    goLockPath: paths.goUpgradeLock,
    log,
  });
  app = await buildApp({
    log,
    version: { version: '1.2.3', commit: 'abc', arch: 'x64', node: '24', capabilities: [] },
    hostRoot: { describe: unused, migrate: unused },
    nspawnHooks: createNspawnHooksService({
      paths,
      log,
      executable: () => Promise.resolve(executable),
      mutationRunning: async () =>
        queue.isBusy() || (await isActivationLockHeld(paths.activationLock)),
      systemctl: {
        daemonReload: () => {
          reloads += 1;
          return Promise.resolve();
        },
      },
    }),
    upgrades: {
      begin: unused,
      get: unused,
      judgeAtStart: unused,
      recover: unused,
      cancel: unused,
      keepMachineCopy: () => undefined,
      machineCopyView: () => undefined,
      drain: () => Promise.resolve(),
    },
    reset: { begin: unused, drain: () => Promise.resolve() },
    // Shut, as during the daemon's stability interval at boot: the machine's
    // pre-start must still be served (app.ts says why).
    startup: gate,
    operations: createOperationRegistry(),
    runMutation: (purpose, work) => queue.run(purpose, work),
    hostView: {
      read: () => {
        throw new Error('status is not read by these tests');
      },
    },
    daemon: { pid: 1, startedAt: 0, executable, socket: 'self-bound', socketPath: paths.socket },
    now: () => 0,
  });
});
afterEach(async () => {
  await app.close();
  await rm(tmp, { recursive: true, force: true });
});

/** An earlier release's blue/green layout under the legacy root, not yet linked. */
async function legacyInstall(): Promise<void> {
  const slots = path.join(paths.legacy, 'lib/aks-flex-node');
  await mkdir(slots, { recursive: true });
  await writeFile(path.join(slots, 'aks-flex-node-blue'), 'old', { mode: 0o755 });
  await symlink('aks-flex-node-blue', path.join(slots, 'aks-flex-node-current'));
  await symlink('aks-flex-node-blue', path.join(slots, 'aks-flex-node-last-good'));
}

const hooksOf = (machine: string) => ({
  method: 'POST' as const,
  url: `/v1/nspawn-machines/${machine}/hooks`,
  payload: {},
});

describe('POST /v1/nspawn-machines/:machine/hooks', () => {
  it('daemon#6.3 migrates a legacy host first, then names the helper under the resolved root', async () => {
    await legacyInstall();
    expect(gate.view().gate).toBe('shut');
    const response = await app.inject(hooksOf('kube2'));
    expect(response.statusCode, response.body).toBe(200);
    const answer = regenerateNspawnHooksResponseSchema.parse(response.json());
    const helper = path.join(paths.legacy, 'bin/unbounded-agent-nspawn-lifecycle');
    expect(answer).toEqual({
      machine: 'kube2',
      migratedFrom: 'absent',
      root: paths.legacy,
      helper,
      changed: true,
      reloaded: true,
    });
    const files = nspawnHookFiles(paths, 'kube2');
    expect(await readFile(files.regenerateConfigUnit, 'utf8')).toContain(
      `ExecStart=${helper} nspawn-lifecycle pre-start kube2\n`,
    );
    expect(await readFile(files.overrideFile, 'utf8')).toContain(
      `ExecStartPost=${helper} nspawn-lifecycle post-start kube2\n`,
    );
    expect(await readFile(helper, 'utf8')).toContain('this-release');
    expect(reloads).toBe(1);

    // Nothing changed the second time: no reload.
    const again = regenerateNspawnHooksResponseSchema.parse(
      (await app.inject(hooksOf('kube2'))).json(),
    );
    expect(again).toMatchObject({ migratedFrom: 'linked', changed: false, reloaded: false });
    expect(reloads).toBe(1);
  });

  it('daemon#94 refuses an unknown machine with problem+json before anything runs', async () => {
    const response = await app.inject(hooksOf('not-a-machine'));
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = problemSchema.parse(response.json());
    expect(problem.code).toBe('INVALID_ARGUMENT');
    expect(problem.detail).toBe('unknown nspawn machine "not-a-machine"');
    expect(problem.hint).toContain('kube1, kube2');
    expect(await readdirOrEmpty(paths.unitDir)).toEqual([]);
    expect(await readdirOrEmpty(paths.root)).toEqual([]);
  });

  it('refuses a body with fields and writes nothing', async () => {
    const response = await app.inject({ ...hooksOf('kube1'), payload: { helper: '/tmp/x' } });
    expect(response.statusCode).toBe(400);
    expect(problemSchema.parse(response.json()).detail).toContain('helper');
    expect(await readdirOrEmpty(paths.unitDir)).toEqual([]);
  });

  it('is refused with 409 while another mutation holds the queue', async () => {
    const response = await hooksRequestWhileQueueBusy('kube1');
    expect(response.statusCode).toBe(409);
    expect(problemSchema.parse(response.json()).code).toBe('ACTIVATION_IN_PROGRESS');
    expect(await readdirOrEmpty(paths.unitDir)).toEqual([]);
  });
});

// Most machine starts find the hooks as they would be written: the daemon
// answers those from reads, without the activation lock.
describe('POST /v1/nspawn-machines/:machine/hooks on an installed root whose hooks are current', () => {
  /** An installed root with kube1's hooks written by a first request, which ran under the lock. */
  async function currentHooks(): Promise<void> {
    await mkdir(paths.root, { recursive: true });
    const first = await app.inject(hooksOf('kube1'));
    expect(first.statusCode, first.body).toBe(200);
    expect(regenerateNspawnHooksResponseSchema.parse(first.json())).toMatchObject({
      migratedFrom: 'installed',
      changed: true,
    });
    expect(queue.mutationsEnded()).toBe(1);
  }

  it('answers unchanged without a mutation (no lock taken), as the mutation would', async () => {
    await currentHooks();
    const response = await app.inject(hooksOf('kube1'));
    expect(response.statusCode, response.body).toBe(200);
    expect(regenerateNspawnHooksResponseSchema.parse(response.json())).toEqual({
      machine: 'kube1',
      migratedFrom: 'installed',
      root: paths.root,
      helper: path.join(paths.root, 'bin/unbounded-agent-nspawn-lifecycle'),
      changed: false,
      reloaded: false,
    });
    expect(queue.mutationsEnded()).toBe(1);
    expect(reloads).toBe(1);
  });

  it('a hook file changed on disk goes through the mutation, which writes it back', async () => {
    await currentHooks();
    const files = nspawnHookFiles(paths, 'kube1');
    await writeFile(files.overrideFile, '[Service]\n');
    const response = await app.inject(hooksOf('kube1'));
    expect(regenerateNspawnHooksResponseSchema.parse(response.json())).toMatchObject({
      changed: true,
      reloaded: true,
    });
    expect(queue.mutationsEnded()).toBe(2);
    expect(await readFile(files.overrideFile, 'utf8')).toContain('ExecStartPost=');
  });

  it('a machine whose hooks were never written goes through the mutation', async () => {
    await currentHooks();
    const response = await app.inject(hooksOf('kube2'));
    expect(regenerateNspawnHooksResponseSchema.parse(response.json())).toMatchObject({
      machine: 'kube2',
      changed: true,
    });
    expect(queue.mutationsEnded()).toBe(2);
  });

  it('an installation left under the legacy root goes through the mutation, which refuses it', async () => {
    await currentHooks();
    await legacyInstall();
    const response = await app.inject(hooksOf('kube1'));
    expect(response.statusCode).toBe(409);
    expect(queue.mutationsEnded()).toBe(2);
  });

  it('is still refused with 409 while this daemon runs a mutation', async () => {
    await currentHooks();
    const response = await hooksRequestWhileQueueBusy('kube1');
    expect(response.statusCode).toBe(409);
    expect(problemSchema.parse(response.json()).code).toBe('ACTIVATION_IN_PROGRESS');
  });

  it('is still refused with 409 while another process holds the activation lock', async () => {
    await currentHooks();
    const other = await acquireActivationLock({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log: createSilentLogger(),
      purpose: 'another process',
    });
    try {
      const response = await app.inject(hooksOf('kube1'));
      expect(response.statusCode).toBe(409);
      expect(problemSchema.parse(response.json()).code).toBe('ACTIVATION_IN_PROGRESS');
    } finally {
      await other.release();
    }
  });
});

/**
 * The hooks request for `machine`, sent while a test mutation holds this
 * daemon's queue; the mutation ends once the answer is in.
 */
async function hooksRequestWhileQueueBusy(machine: string) {
  let release: () => void = () => undefined;
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const holding = queue.run(
    'a test mutation',
    () =>
      new Promise<void>((resolve) => {
        release = resolve;
        markStarted();
      }),
  );
  await started;
  const response = await app.inject(hooksOf(machine));
  release();
  await holding;
  return response;
}

/** A directory's entries; a directory never created has none. */
async function readdirOrEmpty(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: unknown) => {
    if (isNotFound(error)) return [];
    throw error;
  });
}
