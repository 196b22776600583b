import { lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createLogger } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { removeEmptyDir } from './remove-empty-dir.js';
import { makeTempDir } from './test-support.js';

/** A logger that keeps its lines, so a test can see what was said. */
function recordingLogger(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return {
    log: createLogger({ destination: { write: (line: string) => lines.push(line) } }),
    lines,
  };
}

describe('removeEmptyDir (spec hostroot §3.9)', () => {
  it('removes an empty directory', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'dir'));
    await removeEmptyDir(path.join(tmp, 'dir'), recordingLogger().log);
    await expect(lstat(path.join(tmp, 'dir'))).rejects.toThrow(/ENOENT/);
  });

  it('keeps a directory holding files the agent did not install, and says so', async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'dir'));
    await writeFile(path.join(tmp, 'dir/operator.conf'), '');
    const { log, lines } = recordingLogger();
    await removeEmptyDir(path.join(tmp, 'dir'), log);
    expect((await lstat(path.join(tmp, 'dir/operator.conf'))).isFile()).toBe(true);
    expect(lines.join('')).toContain(
      'keeping a directory that holds files the agent did not install',
    );
  });

  it("leaves a link at the name alone: it is an operator's", async () => {
    const tmp = await makeTempDir();
    await mkdir(path.join(tmp, 'elsewhere'));
    await symlink(path.join(tmp, 'elsewhere'), path.join(tmp, 'dir'));
    await removeEmptyDir(path.join(tmp, 'dir'), recordingLogger().log);
    expect((await lstat(path.join(tmp, 'dir'))).isSymbolicLink()).toBe(true);
  });

  it('succeeds on a missing directory and reports other inspect errors', async () => {
    const tmp = await makeTempDir();
    const { log } = recordingLogger();
    await expect(removeEmptyDir(path.join(tmp, 'missing'), log)).resolves.toBeUndefined();
    await writeFile(path.join(tmp, 'file'), '');
    await expect(removeEmptyDir(path.join(tmp, 'file/dir'), log)).rejects.toThrow(
      `inspect ${path.join(tmp, 'file/dir')}: ENOTDIR`,
    );
  });
});
