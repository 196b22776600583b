import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentError } from '@aks-flex-node/log';
import { tryFlock } from './flock.js';

let dir: string;
let lockPath: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'flock-'));
  lockPath = path.join(dir, 'agent-upgrade.lock');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Whether an unrelated `flock(1)` can take the lock now (exit 0) or finds it held (exit 1). */
async function heldByOthers(file: string): Promise<boolean> {
  const probe = spawn('flock', ['--nonblock', file, 'true'], { stdio: 'ignore' });
  const [code] = (await once(probe, 'exit')) as [number | null];
  return code !== 0;
}

/**
 * Starts flock(1) holding `file`, as the Go releases take it, and resolves
 * once it says it holds it: `--no-fork`, so the killed process is the lock's
 * only holder.
 */
async function holdWithFlock(file: string): Promise<ChildProcessByStdio<null, Readable, null>> {
  const holder = spawn('flock', ['--no-fork', file, 'sh', '-c', 'echo held; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await once(holder.stdout, 'data');
  return holder;
}

describe('tryFlock', () => {
  it('holds the lock against another flock(1) until released, and release is idempotent', async () => {
    const handle = await tryFlock(lockPath);
    expect(handle?.path).toBe(lockPath);
    expect(await heldByOthers(lockPath)).toBe(true);
    await handle?.release();
    await handle?.release();
    expect(await heldByOthers(lockPath)).toBe(false);
  });

  it('answers undefined at once while another process holds it, as the Go releases take it', async () => {
    const holder = await holdWithFlock(lockPath);
    try {
      // A take that waited would wait out the holder's 30 s, past vitest's 5 s.
      expect(await tryFlock(lockPath)).toBeUndefined();
    } finally {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    // --no-fork: the killed process was the lock's only holder.
    const handle = await tryFlock(lockPath);
    expect(handle).toBeDefined();
    await handle?.release();
  });

  it('two holders in one process exclude each other', async () => {
    const first = await tryFlock(lockPath);
    expect(first).toBeDefined();
    expect(await tryFlock(lockPath)).toBeUndefined();
    await first?.release();
    const second = await tryFlock(lockPath);
    expect(second).toBeDefined();
    await second?.release();
  });

  it('the kernel frees the lock when its holder is killed', async () => {
    // The holder is a real second process running this module, bundled so plain node can load it.
    const bundle = path.join(dir, 'holder.mjs');
    await build({
      stdin: {
        contents: `import { tryFlock } from ${JSON.stringify(path.join(import.meta.dirname, 'flock.ts'))};
          const handle = await tryFlock(process.argv[2]);
          process.send(handle === undefined ? 'busy' : 'held'); setInterval(() => {}, 1000);`,
        resolveDir: import.meta.dirname,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: bundle,
      logLevel: 'silent',
    });
    const child = spawn(process.execPath, [bundle, lockPath], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const [message] = (await once(child, 'message')) as [string];
    expect(message).toBe('held');
    expect(await tryFlock(lockPath)).toBeUndefined();
    child.kill('SIGKILL');
    await once(child, 'exit');
    // The kernel closes a dying process's files before its parent hears of
    // the exit, so the lock is free by now: no waiting for it.
    const handle = await tryFlock(lockPath);
    expect(handle).toBeDefined();
    await handle?.release();
  }, 15_000);

  it('refuses a lock file it cannot open with HOST_ROOT_IO naming the path', async () => {
    const bad = path.join(dir, 'missing-dir', 'x.lock');
    await expect(tryFlock(bad)).rejects.toSatisfy(
      (error) => isAgentError(error, 'HOST_ROOT_IO') && error.message.includes(bad),
    );
  });
});

describe('tryFlock in a process with nothing else to do', () => {
  it('release keeps the process alive until the lock is freed, and the work after it runs', async () => {
    const dir2 = await mkdtemp(path.join(os.tmpdir(), 'flock-alive-'));
    try {
      const bundle = path.join(dir2, 'release.mjs');
      await build({
        stdin: {
          contents: `import { tryFlock } from ${JSON.stringify(path.join(import.meta.dirname, 'flock.ts'))};
            const handle = await tryFlock(process.argv[2]);
            await handle.release();
            await new Promise((resolve) => setTimeout(resolve, 50));
            console.log('after release');`,
          resolveDir: import.meta.dirname,
          loader: 'ts',
        },
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: bundle,
        logLevel: 'silent',
      });
      const child = spawn(process.execPath, [bundle, path.join(dir2, 'x.lock')], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect({ code, out }).toEqual({ code: 0, out: 'after release\n' });
    } finally {
      await rm(dir2, { recursive: true, force: true });
    }
  }, 15_000);
});

const isRoot = process.getuid?.() === 0;
const nobody = 65534;

describe("tryFlock keeps every lock file root's alone (issue 22 item 1)", () => {
  it('issue22#1 creates the file 0600', async () => {
    const handle = await tryFlock(lockPath);
    expect((await stat(lockPath)).mode & 0o7777).toBe(0o600);
    await handle?.release();
  });

  it.skipIf(!isRoot)(
    "issue22#1 a file left 0644 and another user's is made 0600 and root's, even when the take is refused",
    async () => {
      await writeFile(lockPath, '', { mode: 0o644 });
      await chmod(lockPath, 0o644);
      await chown(lockPath, nobody, nobody);
      const holder = await holdWithFlock(lockPath);
      try {
        expect(await tryFlock(lockPath)).toBeUndefined();
        const info = await stat(lockPath);
        expect({ mode: info.mode & 0o7777, uid: info.uid, gid: info.gid }).toEqual({
          mode: 0o600,
          uid: 0,
          gid: 0,
        });
      } finally {
        holder.kill('SIGKILL');
        await once(holder, 'exit');
      }
    },
  );

  it.skipIf(!isRoot)(
    'issue22#1 once tightened, a user who is not root cannot open it (EACCES)',
    async () => {
      await writeFile(lockPath, '', { mode: 0o644 });
      await chmod(lockPath, 0o644);
      await chmod(dir, 0o755);
      const asNobody = () =>
        spawnSync('setpriv', [
          `--reuid=${nobody}`,
          `--regid=${nobody}`,
          '--clear-groups',
          'flock',
          '--nonblock',
          lockPath,
          'true',
        ]);
      // The hole: a read bit is all flock(2) needs.
      expect(asNobody().status).toBe(0);
      const handle = await tryFlock(lockPath);
      await handle?.release();
      const refused = asNobody();
      expect(refused.status).not.toBe(0);
      expect(refused.stderr.toString()).toContain('Permission denied');
    },
  );

  it('issue22#1 a link or a FIFO at the name is refused, never followed or opened', async () => {
    const elsewhere = path.join(dir, 'elsewhere');
    await writeFile(elsewhere, '', { mode: 0o644 });
    await symlink(elsewhere, lockPath);
    await expect(tryFlock(lockPath)).rejects.toSatisfy((error) =>
      isAgentError(error, 'HOST_ROOT_IO'),
    );
    expect((await stat(elsewhere)).mode & 0o777).toBe(0o644);
    await rm(lockPath);
    expect(spawnSync('mkfifo', [lockPath]).status).toBe(0);
    await expect(tryFlock(lockPath)).rejects.toSatisfy(
      (error) =>
        isAgentError(error, 'HOST_ROOT_IO') && error.message.includes('not a regular file'),
    );
  });
});
