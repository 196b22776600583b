import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tryFlock } from './flock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Starts a process group that holds the lock with flock(1) until killed;
 * resolves once it holds it. Killing the group kills every holder of the
 * descriptor, as a crash of the holder would.
 */
async function holdInOtherProcess(lockPath: string) {
  const child = spawn('flock', ['--exclusive', lockPath, 'sh', '-c', 'echo held; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  await new Promise<void>((resolve) => {
    child.stdout.once('data', () => {
      resolve();
    });
  });
  return {
    kill: async () => {
      process.kill(-(child.pid ?? 0), 'SIGKILL');
      await exited;
    },
  };
}

describe('tryFlock', () => {
  it('takes a free lock, creates the file 0600, and a second open of the same file is refused until release', async () => {
    const lockPath = path.join(dir, 'daemon.lock');
    const first = await tryFlock(lockPath);
    expect(first?.path).toBe(lockPath);
    expect((await stat(lockPath)).mode & 0o777).toBe(0o600);
    expect(await tryFlock(lockPath)).toBeUndefined();
    await first?.release();
    await first?.release();
    const again = await tryFlock(lockPath);
    expect(again).toBeDefined();
    await again?.release();
  });

  it('is refused while another process holds it, and free as soon as that process is killed', async () => {
    const lockPath = path.join(dir, 'daemon.lock');
    const other = await holdInOtherProcess(lockPath);
    expect(await tryFlock(lockPath)).toBeUndefined();
    await other.kill();
    // The group's last member may still be exiting when flock(1) has: the
    // kernel frees the lock as the last descriptor closes, within moments.
    let taken = await tryFlock(lockPath);
    for (let tries = 0; taken === undefined && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      taken = await tryFlock(lockPath);
    }
    expect(taken).toBeDefined();
    await taken?.release();
  });

  it('fails with HOST_ROOT_IO naming the path when the directory is missing', async () => {
    const lockPath = path.join(dir, 'missing', 'daemon.lock');
    await expect(tryFlock(lockPath)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: lockPath,
    });
  });
});
