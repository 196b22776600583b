import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { operationSchema } from '@aks-flex-node/api';
import { readOperationRecord } from '@aks-flex-node/agentbinary';
import {
  binaryFile,
  hostPathsUnder,
  nspawnLifecycleFile,
  unitNames,
  type HostPaths,
} from '@aks-flex-node/layout';
import { acquireActivationLock } from '@aks-flex-node/lock';
import { createLogger, createSilentLogger } from '@aks-flex-node/log';
import type { ResetEffects } from '@aks-flex-node/reset';
import { buildApp } from '../app.js';
import type { SupervisorDeps } from '../deps.js';
import { createMutationQueue } from '../mutation-queue.js';
import { createOperationRegistry } from '../upgrade/operation-registry.js';
import type { UpgradeService } from '../upgrade/upgrade-service.js';
import { createResetService, type ResetService } from './reset-service.js';

const log = createSilentLogger();
const unused = () => Promise.reject(new Error('not used by this test'));
const unusedUpgrades: UpgradeService = {
  begin: unused,
  get: (id) => Promise.resolve(readOperationRecord(paths.operationsDir, id)),
  judgeAtStart: unused,
  recover: unused,
  cancel: unused,
  keepMachineCopy: () => undefined,
  machineCopyView: () => undefined,
  drain: () => Promise.resolve(),
};

let tmp: string;
let paths: HostPaths;
let app: FastifyInstance;
let reset: ResetService;
let calls: string[];
let stops: string[];
let failStop: boolean;
let daemonStopError: Error | undefined;
let resetLogLines: string[];

const exists = (file: string) =>
  lstat(file).then(
    () => true,
    () => false,
  );

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'aks-flex-node-reset-route-'));
  paths = hostPathsUnder(tmp);
  for (const file of [binaryFile, nspawnLifecycleFile]) {
    await mkdir(path.dirname(path.join(paths.root, file)), { recursive: true });
    await writeFile(path.join(paths.root, file), '#!/bin/sh\n', { mode: 0o755 });
  }
  await mkdir(paths.unitDir, { recursive: true });
  await writeFile(path.join(paths.unitDir, unitNames.agent), '[Unit]\n');
  calls = [];
  stops = [];
  failStop = false;
  daemonStopError = undefined;
  resetLogLines = [];
  const effects: ResetEffects = {
    cancelQueuedRestarts: () => Promise.resolve(void calls.push('cancel-restarts')),
    disableNow: (unit) => Promise.resolve(void calls.push(`disable --now ${unit}`)),
    disable: (units) => Promise.resolve(void calls.push(`disable ${units.join(' ')}`)),
    stop: (units) =>
      failStop
        ? Promise.reject(new Error('systemctl stop exited 1 (fake)'))
        : Promise.resolve(void calls.push(`stop ${units.join(' ')}`)),
    daemonReload: () => Promise.resolve(void calls.push('daemon-reload')),
    terminateMachine: () => Promise.resolve(false),
  };
  const queue = createMutationQueue({
    lockPath: paths.activationLock,
    goLockPath: paths.goUpgradeLock,
    log,
  });
  const operations = createOperationRegistry();
  reset = createResetService({
    paths,
    log: createLogger({ destination: { write: (line: string) => resetLogLines.push(line) } }),
    queue,
    registry: operations,
    effects,
    // A node with no network state of the Go library: the sweep lists and finds nothing.
    network: {
      listLinks: () => Promise.resolve([]),
      deleteLink: () => Promise.reject(new Error('nothing to delete (fake)')),
      listNftTables: () => Promise.resolve([]),
      deleteNftTable: () => Promise.reject(new Error('nothing to delete (fake)')),
      listNftRules: () => Promise.resolve([]),
      deleteNftRule: () => Promise.reject(new Error('nothing to delete (fake)')),
      listRoutingTables: () => Promise.resolve([]),
      removeRoutingTable: () => Promise.reject(new Error('nothing to delete (fake)')),
      saveIptablesNat: () => Promise.resolve('*nat\nCOMMIT\n'),
      removeIptablesNatChains: () => Promise.reject(new Error('nothing to delete (fake)')),
    },
    runningUnits: [unitNames.agent, unitNames.agentSocket],
    stopDaemon: (reason) => {
      stops.push(reason);
      return daemonStopError === undefined ? Promise.resolve() : Promise.reject(daemonStopError);
    },
    now: () => new Date(),
  });
  const deps: SupervisorDeps = {
    log,
    version: { version: '1.2.3', commit: 'abc', arch: 'x64', node: '24', capabilities: [] },
    hostRoot: { describe: unused, migrate: unused },
    upgrades: unusedUpgrades,
    operations,
    reset,
    nspawnHooks: { regenerate: unused, unchanged: unused },
    startup: {
      refusal: () => undefined,
      view: () => {
        throw new Error('not used by this test');
      },
    },
    runMutation: (purpose, work) => queue.run(purpose, work),
    hostView: {
      read: () => {
        throw new Error('status is not read by these tests');
      },
    },
    daemon: {
      pid: 1,
      startedAt: 0,
      executable: '/x',
      socket: 'self-bound',
      socketPath: paths.socket,
    },
    now: () => Date.now(),
  };
  app = await buildApp(deps);
});

afterEach(async () => {
  await app.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('POST /v1/reset', () => {
  it('runs the sweep as an operation, records the outcome, then stops the daemon', async () => {
    const answer = await app.inject({ method: 'POST', url: '/v1/reset', payload: {} });
    expect(answer.statusCode).toBe(202);
    const operation = operationSchema.parse(answer.json());
    expect(operation.kind).toBe('reset');
    await reset.drain();

    const recorded = await readOperationRecord(paths.operationsDir, operation.id);
    expect(recorded).toMatchObject({ kind: 'reset', state: 'succeeded', phase: 'done' });
    expect(recorded?.removed).toEqual([
      path.join(paths.unitDir, unitNames.agent),
      path.join(paths.root, nspawnLifecycleFile),
    ]);
    expect(recorded?.keptBinary).toBe(path.join(paths.root, binaryFile));
    expect(stops).toEqual([`reset ${operation.id}`]);
    // The daemon's own units are disabled, never stopped by the sweep.
    expect(calls.filter((c) => c.startsWith('stop'))).not.toContain(`stop ${unitNames.agent}`);
    expect(await exists(path.join(paths.root, nspawnLifecycleFile))).toBe(false);

    const events = await app.inject({
      method: 'GET',
      url: `/v1/operations/${operation.id}/events`,
    });
    const phases = events.body
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { phase: string }).phase);
    expect(phases).toEqual([
      'accepted',
      'cancel-restarts',
      'first-boot-unit',
      'stop-agent',
      'stop-machines',
      'remove-machines',
      'node-network',
      'remove-files',
      'unfinished-move',
      'daemon-reload',
      'done',
    ]);
  });

  it('is refused with 409 at once while another holder has the activation lock, and changes nothing', async () => {
    const held = await acquireActivationLock({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'a test',
    });
    try {
      const answer = await app.inject({ method: 'POST', url: '/v1/reset', payload: {} });
      expect(answer.statusCode).toBe(409);
      expect(answer.json()).toMatchObject({ code: 'ACTIVATION_IN_PROGRESS' });
    } finally {
      await held.release();
    }
    expect(calls).toEqual([]);
    expect(stops).toEqual([]);
    expect(await exists(path.join(paths.unitDir, unitNames.agent))).toBe(true);
  });

  it('issue#28.3 is refused with 409 at once, naming the upgrade, while a switched AgentUpgrade is unjudged, and changes nothing', async () => {
    // The restart window: current names the candidate, and only the signal
    // knows the operation until the restarted daemon judges it.
    const slots = path.join(paths.root, 'lib/aks-flex-node');
    await mkdir(slots, { recursive: true });
    const candidate = path.join(slots, 'aks-flex-node-green');
    await writeFile(candidate, '#!/bin/sh\n', { mode: 0o755 });
    await symlink(candidate, path.join(slots, 'aks-flex-node-current'));
    const signal = JSON.stringify({
      operationName: 'upgrade-in-its-restart',
      candidatePath: candidate,
      switchCommitted: true,
    });
    await mkdir(path.dirname(paths.signalFile), { recursive: true });
    await writeFile(paths.signalFile, signal);

    const answer = await app.inject({ method: 'POST', url: '/v1/reset', payload: {} });

    expect(answer.statusCode).toBe(409);
    expect(answer.json()).toMatchObject({
      code: 'ACTIVATION_IN_PROGRESS',
      detail: expect.stringContaining('upgrade-in-its-restart') as unknown,
      hint: expect.stringContaining('recover-agent-upgrade') as unknown,
    });
    await reset.drain();
    expect(calls).toEqual([]);
    expect(stops).toEqual([]);
    expect(await readFile(paths.signalFile, 'utf8')).toBe(signal);
    expect(await exists(path.join(paths.unitDir, unitNames.agent))).toBe(true);
  });

  it('a failed step is recorded as failed, and the daemon keeps running to be asked again', async () => {
    failStop = true;
    const answer = await app.inject({ method: 'POST', url: '/v1/reset', payload: {} });
    expect(answer.statusCode).toBe(202);
    const { id } = operationSchema.parse(answer.json());
    await reset.drain();
    const recorded = await readOperationRecord(paths.operationsDir, id);
    expect(recorded).toMatchObject({ kind: 'reset', state: 'failed', phase: 'failed' });
    expect(recorded?.message).toContain('systemctl stop exited 1 (fake)');
    expect(stops).toEqual([]);
    // Nothing was removed: paths are resolved only after the agent stopped.
    expect(await exists(path.join(paths.unitDir, unitNames.agent))).toBe(true);
  });

  it('a daemon that cannot queue its own stop leaves the succeeded record as the client read it, and says so', async () => {
    daemonStopError = new Error('systemctl --no-block stop exited 1 (fake)');
    const answer = await app.inject({ method: 'POST', url: '/v1/reset', payload: {} });
    const { id } = operationSchema.parse(answer.json());
    await reset.drain();
    // Before, the stop's failure went on to the failure path, which rewrote
    // the record as failed after the client had been told it succeeded.
    const recorded = await readOperationRecord(paths.operationsDir, id);
    expect(recorded).toMatchObject({ kind: 'reset', state: 'succeeded', phase: 'done' });
    expect(stops).toEqual([`reset ${id}`]);
    const events = await app.inject({ method: 'GET', url: `/v1/operations/${id}/events` });
    const last = JSON.parse(events.body.trim().split('\n').at(-1) ?? '') as { state: string };
    expect(last.state).toBe('succeeded');
    const logged = resetLogLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 50,
        opId: id,
        msg: expect.stringContaining('could not queue its own stop') as unknown,
        hint: expect.stringContaining('systemctl stop') as unknown,
      }),
    );
  });

  it('refuses an unknown field', async () => {
    const answer = await app.inject({ method: 'POST', url: '/v1/reset', payload: { force: true } });
    expect(answer.statusCode).toBe(400);
    expect(calls).toEqual([]);
  });
});
