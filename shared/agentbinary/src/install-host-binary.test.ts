import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentBinaryPathsUnder } from './agent-binary-paths.js';
import { installHostBinary } from './install-host-binary.js';

const log = createSilentLogger();

async function script(file: string, body: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

/** A root under a temp dir, the running binary beside it, and a prepare that records its calls. */
async function fixture() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'install-host-binary-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = agentBinaryPathsUnder(path.join(tmp, 'root'));
  const executable = path.join(tmp, 'running');
  await script(executable, 'echo running');
  let prepared = 0;
  const prepare = async () => {
    prepared += 1;
    await mkdir(path.dirname(paths.binary), { recursive: true });
    await mkdir(path.dirname(paths.blue), { recursive: true });
  };
  return { tmp, paths, executable, prepare, prepared: () => prepared };
}

describe('installHostBinary (spec daemon §9.1)', () => {
  it('daemon#8 a fresh host: prepared, copied from the running binary, verified, mode 0755', async () => {
    const f = await fixture();
    expect(
      await installHostBinary(f.paths, { executable: f.executable, prepare: f.prepare, log }),
    ).toMatchObject({ executable: f.executable, ino: String((await lstat(f.paths.binary)).ino) });
    expect(f.prepared()).toBe(1);
    expect(await readFile(f.paths.binary, 'utf8')).toBe(await readFile(f.executable, 'utf8'));
    expect((await lstat(f.paths.binary)).mode & 0o777).toBe(0o755);
  });

  it('daemon#9 a usable executable already there: not prepared, not copied, content unchanged', async () => {
    const f = await fixture();
    await script(f.paths.binary, 'echo already');
    expect(
      await installHostBinary(f.paths, { executable: f.executable, prepare: f.prepare, log }),
    ).toBeUndefined();
    expect(f.prepared()).toBe(0);
    expect(await readFile(f.paths.binary, 'utf8')).toContain('already');
  });

  it('daemon#10 a link to a usable slot is kept untouched', async () => {
    const f = await fixture();
    await script(f.paths.blue, 'echo blue');
    await mkdir(path.dirname(f.paths.binary), { recursive: true });
    await symlink(f.paths.blue, f.paths.binary);
    expect(
      await installHostBinary(f.paths, { executable: f.executable, prepare: f.prepare, log }),
    ).toBeUndefined();
    expect(f.prepared()).toBe(0);
    expect(await readlink(f.paths.binary)).toBe(f.paths.blue);
  });

  it('daemon#11 a dangling link is replaced by a verified copy', async () => {
    const f = await fixture();
    await mkdir(path.dirname(f.paths.binary), { recursive: true });
    await symlink(path.join(f.tmp, 'gone'), f.paths.binary);
    expect(
      await installHostBinary(f.paths, { executable: f.executable, prepare: f.prepare, log }),
    ).toBeDefined();
    expect(f.prepared()).toBe(1);
    expect((await lstat(f.paths.binary)).isFile()).toBe(true);
  });

  it('daemon#12 a copy that cannot run (as on noexec): NOT_EXECUTABLE naming noexec, with the cause, and nothing left', async () => {
    const f = await fixture();
    // Runs from its own path only where it is not the copy: as a noexec mount would refuse it.
    await script(f.executable, `case "$0" in */root/*) exit 126 ;; esac; echo running`);
    const error = await installHostBinary(f.paths, {
      executable: f.executable,
      prepare: f.prepare,
      log,
    }).catch((e: unknown) => e);
    expect(isAgentError(error, 'NOT_EXECUTABLE')).toBe(true);
    expect((error as Error).cause).toBeDefined();
    expect(JSON.stringify((error as { hint?: string }).hint)).toMatch(/noexec/);
    await expect(lstat(f.paths.binary)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
