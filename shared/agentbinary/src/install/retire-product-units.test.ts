import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hostPathsUnder, type HostPaths } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import { retireProductOnlyUnits, type RetireSystemctl } from './retire-product-units.js';
import { renderServiceAssets } from './service-assets.js';

const log = createSilentLogger();

function recordingSystemctl(failDisable = false): { systemctl: RetireSystemctl; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    systemctl: {
      daemonReload: () => {
        calls.push('daemon-reload');
        return Promise.resolve();
      },
      disableNow: (unit) => {
        calls.push(`disable --now ${unit}`);
        return failDisable ? Promise.reject(new Error('Access denied')) : Promise.resolve();
      },
    },
  };
}

describe('issue21 hand-back: the units only this product has are retired', () => {
  let tmp = '';
  let paths: HostPaths;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'retire-units-'));
    paths = hostPathsUnder(tmp);
    await mkdir(paths.unitDir, { recursive: true });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('a Go current renders no socket or guard (its units name neither)', () => {
    const names = renderServiceAssets(
      paths,
      agentBinaryPathsUnder('/opt/unbounded/agent'),
      'released',
      undefined,
      { current: 'other-release', lastGood: 'this-product' },
    ).map((asset) => path.basename(asset.path));
    expect(names).toEqual([
      'aks-flex-node-recovery.sh',
      'aks-flex-node-agent-recovery.service',
      'aks-flex-node-agent.service',
    ]);
  });

  it('stops and disables the socket, removes both files, then reloads once; the Go units stay', async () => {
    for (const name of [
      'aks-flex-node-agent.socket',
      'aks-flex-node-upgrade-guard.service',
      'aks-flex-node-agent.service',
      'aks-flex-node-agent-recovery.service',
    ]) {
      await writeFile(path.join(paths.unitDir, name), '[Unit]\n');
    }
    const { systemctl, calls } = recordingSystemctl();
    expect(await retireProductOnlyUnits(paths, systemctl, log)).toBe(true);
    expect(calls).toEqual(['disable --now aks-flex-node-agent.socket', 'daemon-reload']);
    expect((await readdir(paths.unitDir)).sort()).toEqual([
      'aks-flex-node-agent-recovery.service',
      'aks-flex-node-agent.service',
    ]);
    // Again: nothing left to retire, nothing asked of systemd.
    calls.length = 0;
    expect(await retireProductOnlyUnits(paths, systemctl, log)).toBe(false);
    expect(calls).toEqual([]);
  });

  it('a socket systemd will not stop is kept, with the commands to run by hand', async () => {
    const socket = path.join(paths.unitDir, 'aks-flex-node-agent.socket');
    await writeFile(socket, '[Unit]\n');
    const { systemctl } = recordingSystemctl(true);
    await expect(retireProductOnlyUnits(paths, systemctl, log)).rejects.toMatchObject({
      code: 'HOST_ROOT_IO',
      path: socket,
      hint: expect.stringContaining(
        'systemctl disable --now aks-flex-node-agent.socket',
      ) as unknown,
    });
    expect(await readdir(paths.unitDir)).toEqual(['aks-flex-node-agent.socket']);
  });
});
