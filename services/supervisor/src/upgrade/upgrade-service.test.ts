import { access, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { isActivationLockHeld } from '@aks-flex-node/lock';
import { AgentError, createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMutationQueue, type MutationQueue } from '../mutation-queue.js';
import type { ArchiveHandler } from './archive-handler.js';
import { createOperationRegistry } from './operation-registry.js';
import { createUpgradeService } from './upgrade-service.js';

const log = createSilentLogger();
const sourceUrl = 'https://releases.example.test/v2/aks-flex-node-linux-amd64.tar.gz';

/** Archives that parse but must never be fetched: every case here ends before a download. */
const untouchedArchives: ArchiveHandler = {
  parse: () => ({ redactedUrl: sourceUrl }),
  fetch: () => Promise.reject(new Error('fetched although the upgrade was refused')),
  install: () => Promise.reject(new Error('installed although the upgrade was refused')),
};

async function newService(guard: () => Promise<void> = () => Promise.resolve()) {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'upgrade-service-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths: HostPaths = hostPathsUnder(tmp);
  const queue: MutationQueue = createMutationQueue({
    lockPath: paths.activationLock,
    goLockPath: paths.goUpgradeLock,
    log,
  });
  const restarts: string[] = [];
  const service = createUpgradeService({
    paths,
    log,
    queue,
    registry: createOperationRegistry(),
    restart: {
      pendingDelayMs: () => 0,
      scheduleRestart: (reason) => {
        restarts.push(reason);
        return Promise.resolve();
      },
    },
    archives: untouchedArchives,
    guard,
    host: {
      runningExecutable: () => Promise.resolve(path.join(tmp, 'usr/local/bin/aks-flex-node')),
      wallClock: () => new Date('2026-01-01T00:00:00.000Z'),
    },
  });
  return { service, paths, queue, restarts };
}

async function writeSignal(paths: HostPaths, signal: Record<string, unknown>): Promise<void> {
  await mkdir(paths.configDir, { recursive: true });
  await writeFile(paths.signalFile, JSON.stringify(signal));
}

describe('the upgrade service', () => {
  it('agentbinary§3.5 a pending AgentUpgrade refuses a new one at once, before an operation or the lock', async () => {
    const { service, paths, restarts } = await newService();
    await writeSignal(paths, { operationName: 'op-1' });
    const attempt = service.begin({ source: { url: sourceUrl } });
    await expect(attempt).rejects.toThrow('an AgentUpgrade is already pending (op-1)');
    await expect(attempt).rejects.toMatchObject({ code: 'ACTIVATION_IN_PROGRESS' });
    await service.drain();
    expect(await isActivationLockHeld(paths.activationLock)).toBe(false);
    expect(restarts).toEqual([]);
  });

  it('a second mutation holding the queue refuses the upgrade at once', async () => {
    const { service, queue } = await newService();
    let release: (() => void) | undefined;
    const held = queue.run(
      'a host-root migration',
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    await expect.poll(() => release !== undefined).toBe(true);
    await expect(service.begin({ source: { url: sourceUrl } })).rejects.toMatchObject({
      code: 'ACTIVATION_IN_PROGRESS',
    });
    release?.();
    await held;
  });

  it('a refusal by the guard fails the accepted operation, records it, and restarts nothing', async () => {
    const refusal = new AgentError('UPGRADE_REFUSED', '/usr/local/bin/aks-flex-node still runs');
    const { service, paths, restarts } = await newService(() => Promise.reject(refusal));
    const accepted = await service.begin({ source: { url: sourceUrl } });
    expect(accepted).toMatchObject({ state: 'running', sourceUrl });
    await service.drain();
    expect(await service.get(accepted.id)).toMatchObject({
      state: 'failed',
      phase: 'failed',
      message: '/usr/local/bin/aks-flex-node still runs',
    });
    await access(path.join(paths.operationsDir, `${accepted.id}.json`));
    await expect(access(paths.signalFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(restarts).toEqual([]);
  });

  it('an operation only the signal knows reads as restarting, being judged; an unknown one is absent', async () => {
    const { service, paths } = await newService();
    await writeSignal(paths, {
      operationName: 'op-7',
      startedAt: '2026-01-01T00:00:00.000Z',
      sourceUrl,
    });
    expect(await service.get('op-7')).toEqual({
      id: 'op-7',
      kind: 'agent-upgrade',
      state: 'restarting',
      phase: 'judging',
      startedAt: '2026-01-01T00:00:00.000Z',
      sourceUrl,
    });
    expect(await service.get('op-8')).toBeUndefined();
  });

  it('issue 9: a host root that moved between resolving the paths and taking the lock refuses the switch', async () => {
    const moved: { root?: string } = {};
    const {
      service,
      paths: p,
      restarts,
    } = await newService(async () => {
      // Runs under the lock, after begin() resolved the root to the legacy link.
      if (moved.root === undefined) return;
      await rm(moved.root);
      await mkdir(moved.root, { recursive: true });
    });
    moved.root = p.root;
    await mkdir(p.legacy, { recursive: true });
    await mkdir(path.dirname(p.root), { recursive: true });
    await symlink(p.legacy, p.root);
    const operation = await service.begin({ source: { url: sourceUrl } });
    await service.drain();
    const finished = await service.get(operation.id);
    expect(finished?.state).toBe('failed');
    expect(finished?.message).toMatch(
      /the host root moved from .*usr\/local to .*opt\/unbounded\/agent/,
    );
    expect(restarts).toEqual([]);
  });
});
