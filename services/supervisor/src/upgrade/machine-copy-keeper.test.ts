import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentBinaryPathsUnder, nspawnCopyPath } from '@aks-flex-node/agentbinary';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createMutationQueue } from '../mutation-queue.js';
import { createMachineCopyKeeper } from './machine-copy-keeper.js';

const log = createSilentLogger();

/** An installed host on blue, and kube1's root filesystem with the copy's directory. */
async function hostWithMachine(): Promise<{ paths: HostPaths; blue: string; copy: string }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'machine-copy-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = hostPathsUnder(tmp);
  const layout = agentBinaryPathsUnder(paths.root, paths.machinesDir);
  await mkdir(layout.slotDir, { recursive: true });
  await mkdir(paths.runDir, { recursive: true });
  await writeFile(layout.blue, '#!/bin/sh\necho blue\n', { mode: 0o755 });
  await symlink(layout.blue, layout.current);
  const copy = nspawnCopyPath(paths.machinesDir, 'kube1');
  await mkdir(path.dirname(copy), { recursive: true });
  return { paths, blue: layout.blue, copy };
}

/** A sleep each test releases by hand, recording the waits asked for. */
function manualSleep() {
  const waits: number[] = [];
  let release: () => void = () => undefined;
  let asked: () => void = () => undefined;
  let nextAsk = new Promise<void>((resolve) => (asked = resolve));
  return {
    waits,
    /** Resolves once the keeper waits; then `wake()` ends that wait. */
    waiting: () => nextAsk,
    wake: () => {
      nextAsk = new Promise<void>((resolve) => (asked = resolve));
      release();
    },
    sleep: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        waits.push(ms);
        release = resolve;
        signal.addEventListener(
          'abort',
          () => {
            reject(signal.reason as Error);
          },
          { once: true },
        );
        asked();
      }),
  };
}

function keeperFor(paths: HostPaths, sleep: ReturnType<typeof manualSleep>) {
  return createMachineCopyKeeper({
    paths,
    log,
    queue: createMutationQueue({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
    }),
    isCopyOf: async (copy, source) =>
      (await readFile(copy).catch(() => Buffer.alloc(0))).equals(await readFile(source)),
    sleep: sleep.sleep,
    now: () => new Date('2026-01-01T00:00:00.000Z'),
    initialMs: 5_000,
    maxMs: 12_000,
  });
}

describe('issue21 the machine copy keeper', () => {
  it('syncs a stale copy to current at once, and then has nothing to say', async () => {
    const { paths, blue, copy } = await hostWithMachine();
    await writeFile(copy, 'an older agent');
    const sleep = manualSleep();
    const keeper = keeperFor(paths, sleep);
    keeper.keep();
    await keeper.stop();
    expect(await readFile(copy, 'utf8')).toBe(await readFile(blue, 'utf8'));
    expect(keeper.view()).toBeUndefined();
    expect(sleep.waits).toEqual([]);
  });

  it('issue22 a copy it cannot write is shown with its repair and retried with a growing wait until the cause is gone', async () => {
    const { paths, blue, copy } = await hostWithMachine();
    // A directory where the copy goes: no rename can replace it, as with an immutable file.
    await mkdir(path.join(copy, 'in-the-way'), { recursive: true });
    const sleep = manualSleep();
    const keeper = keeperFor(paths, sleep);
    keeper.keep('kube1');
    await sleep.waiting();
    expect(keeper.view()).toMatchObject({ machine: 'kube1', path: copy });
    expect(keeper.view()?.error).toMatch(/sync the nspawn machine kube1's copy/);
    expect(keeper.view()?.repair).toMatch(/writable for root/);
    sleep.wake();
    await sleep.waiting();
    sleep.wake();
    await sleep.waiting();
    expect(sleep.waits).toEqual([5_000, 10_000, 12_000]);
    // The cause removed: the next attempt converges and the status entry goes.
    await rm(copy, { recursive: true });
    sleep.wake();
    await vi.waitFor(() => {
      expect(keeper.view()).toBeUndefined();
    });
    await keeper.stop();
    expect(sleep.waits).toHaveLength(3);
    expect(await readFile(copy, 'utf8')).toBe(await readFile(blue, 'utf8'));
  });

  it('leaves the copy to a pending upgrade', async () => {
    const { paths, copy } = await hostWithMachine();
    await writeFile(copy, 'the candidate, synced by the upgrade');
    await mkdir(paths.configDir, { recursive: true });
    await writeFile(paths.signalFile, JSON.stringify({ operationName: 'op-1' }));
    const keeper = keeperFor(paths, manualSleep());
    keeper.keep('kube1');
    await keeper.stop();
    expect(await readFile(copy, 'utf8')).toBe('the candidate, synced by the upgrade');
  });
});
