import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createSilentLogger } from '@aks-flex-node/log';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'take-lockfile-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.resetModules();
  await rm(dir, { recursive: true, force: true });
});

it('a refresh in flight when the lock is released does not end the process as a lost lock', async () => {
  const lockPath = path.join(dir, 'activation.lock');
  // Once the lock is taken, the next stat of its directory (proper-lockfile's
  // refresh) is held until the release has removed the directory, then let
  // through: the timing a loaded host gave a CI run.
  const realStat = fs.stat;
  let armed = false;
  // Resolves once proper-lockfile's own callback for that stat has run.
  let heldStat: (() => Promise<void>) | undefined;
  vi.spyOn(fs, 'stat').mockImplementation((file: fs.PathLike, ...rest: unknown[]) => {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException | null, stats?: fs.Stats) => void;
    if (armed && String(file) === lockPath && heldStat === undefined) {
      heldStat = () =>
        new Promise<void>((resolve) => {
          realStat(file, (error, stats) => {
            callback(error, stats);
            resolve();
          });
        });
      return;
    }
    (realStat as (...args: unknown[]) => void)(file, ...rest);
  });
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  // Imported after the spy: the module copies node:fs when it loads.
  const { takeLockfile } = await import('./take-lockfile.js');
  const release = await takeLockfile({
    lockPath,
    goLockPath: path.join(dir, 'go.lock'),
    log: createSilentLogger(),
    purpose: 'a test',
    // proper-lockfile refreshes every stale / 2: once a second here.
    staleMs: 2_000,
  });
  armed = true;
  await vi.waitFor(
    () => {
      expect(heldStat).toBeDefined();
    },
    { timeout: 5_000, interval: 50 },
  );
  await release();
  // The stat's answer (ENOENT) reaches proper-lockfile's refresh, which
  // reports the lock compromised at once, in that callback.
  await heldStat?.();
  expect(exit).not.toHaveBeenCalled();
});
