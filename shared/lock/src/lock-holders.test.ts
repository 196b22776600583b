import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeLockHolders, findLockHolders } from './lock-holders.js';

let dir: string;
let lockPath: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'holders-'));
  lockPath = path.join(dir, 'x.lock');
  await writeFile(lockPath, '');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `sh -c script` and waits for its first line, the pid it reports. */
async function startHolder(script: string) {
  const child = spawn('sh', ['-c', script, 'sh', lockPath], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return { child, reported: Number(line.toString().trim()) };
}

describe('findLockHolders (issue 22 item 1)', () => {
  it('names the process that took the flock and still holds it', async () => {
    const { child } = await startHolder('echo $$; exec flock --no-fork "$1" sleep 30');
    try {
      await expect.poll(() => findLockHolders(lockPath), { timeout: 5_000 }).toHaveLength(1);
      const holders = await findLockHolders(lockPath);
      expect(holders).toEqual([{ pid: child.pid, uid: 0, user: 'root', command: 'sleep 30' }]);
      expect(describeLockHolders(holders)).toBe(`pid ${String(child.pid)} (sleep 30, user root)`);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('names the process keeping the file open when the one that called flock(2) has exited', async () => {
    // As a shell's `flock 9` and this product's tryFlock take it: the helper
    // that placed the lock is gone, /proc/locks still names it.
    const { child, reported } = await startHolder(
      'exec 9<"$1"; flock --nonblock 9; echo $$; exec sleep 30',
    );
    try {
      const holders = await findLockHolders(lockPath);
      expect(holders.map((holder) => holder.pid)).toEqual([reported]);
      expect(holders[0]?.command).toBe('sleep 30');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('finds nobody when the lock is free, and says so', async () => {
    expect(await findLockHolders(lockPath)).toEqual([]);
    expect(describeLockHolders([])).toContain('lslocks');
  });
});
