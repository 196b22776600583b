import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPathsUnder, temporaryFilePlaces, type HostPaths } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { sweepTemporaryFiles } from './sweep-temporary-files.js';

const log = createSilentLogger();
let tmp: string;
let paths: HostPaths;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'temp-sweep-'));
  paths = hostPathsUnder(tmp);
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function sweep() {
  return sweepTemporaryFiles({
    paths,
    places: temporaryFilePlaces(paths),
    log,
  });
}

async function put(file: string, content = 'x'): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  return file;
}

describe("the daemon's start sweep of temporary files (issue 22 item 5)", () => {
  it("issue22#5 removes every stopped write's temporary file it knows, under both roots; an operator's stay", async () => {
    const leftovers = [
      await put(path.join(paths.root, 'bin/.unbounded-agent-nspawn-lifecycle.0123456789ab.tmp')),
      await put(path.join(paths.legacy, 'bin/.aks-flex-node.0123456789ab.tmp')),
      await put(path.join(paths.root, 'lib/aks-flex-node/.aks-flex-node-blue.abcdef012345.tmp')),
      await put(path.join(paths.configDir, '.agent-upgrade-signal.json.0123456789ab.tmp')),
      await put(path.join(paths.unitDir, '.aks-flex-node-agent.service.0123456789ab.tmp')),
      await put(path.join(paths.operationsDir, '.op-7.json.0123456789ab.tmp')),
      await put(
        path.join(tmp, 'var/lib/machines/kube1/usr/local/bin/.aks-flex-node.0123456789ab.tmp'),
      ),
    ];
    const operators = [
      await put(path.join(paths.root, 'bin/unbounded-agent-nspawn-lifecycle')),
      await put(path.join(paths.legacy, 'bin/.my-tool.0123456789ab.tmp')),
      await put(path.join(paths.legacy, 'bin/.aks-flex-node.tmp')),
      await put(path.join(paths.unitDir, '.my.service.0123456789ab.tmp')),
    ];
    expect((await sweep()).sort()).toEqual([...leftovers].sort());
    for (const file of operators) {
      expect(await readdir(path.dirname(file))).toContain(path.basename(file));
    }
    expect(await sweep()).toEqual([]);
  });

  it('issue22#5 with nothing left, no lock is taken (a start costs only the listings)', async () => {
    await put(path.join(paths.legacy, 'bin/.my-tool.0123456789ab.tmp'));
    expect(await sweep()).toEqual([]);
    await expect(readdir(paths.runDir)).rejects.toThrow(/ENOENT/);
  });

  it('issue22#5 while an activation holds the lock nothing is removed; the next start sweeps', async () => {
    const leftover = await put(path.join(paths.root, 'bin/.aks-flex-node.0123456789ab.tmp'));
    await mkdir(path.dirname(paths.goUpgradeLock), { recursive: true });
    const holder = spawn('flock', ['--no-fork', paths.goUpgradeLock, 'sleep', '30'], {
      stdio: 'ignore',
    });
    try {
      await expect
        .poll(
          async () => {
            const probe = spawn('flock', ['--nonblock', paths.goUpgradeLock, 'true']);
            const [code] = (await once(probe, 'exit')) as [number];
            return code;
          },
          { timeout: 5_000 },
        )
        .not.toBe(0);
      expect(await sweep()).toEqual([]);
      expect(await readdir(path.dirname(leftover))).toContain(path.basename(leftover));
    } finally {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    expect(await sweep()).toEqual([leftover]);
  });
});
