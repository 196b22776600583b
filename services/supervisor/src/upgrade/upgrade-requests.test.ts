import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentBinaryPathsUnder, type AgentBinaryPaths } from '@aks-flex-node/agentbinary';
import { describe, expect, it, onTestFinished } from 'vitest';
import { refuseRunningSlot } from './upgrade-requests.js';

/** Both slots, and `current` naming `current` when given. */
async function layoutWith(current: 'blue' | 'green' | undefined): Promise<AgentBinaryPaths> {
  const tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'running-slot-')));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = agentBinaryPathsUnder(path.join(tmp, 'opt/unbounded/agent'));
  await mkdir(paths.slotDir, { recursive: true });
  await writeFile(paths.blue, '#!/bin/sh\n', { mode: 0o755 });
  await writeFile(paths.green, '#!/bin/sh\n', { mode: 0o755 });
  if (current !== undefined) await symlink(paths[current], paths.current);
  return paths;
}

describe('refuseRunningSlot', () => {
  it.each<[string, 'blue' | 'green' | undefined, 'blue' | 'green']>([
    ['agentbinary§1.4 the daemon runs what current names: the other slot is free', 'blue', 'blue'],
    [
      'agentbinary§3.2.1 no current yet: initialisation decides, nothing to refuse',
      undefined,
      'blue',
    ],
  ])('%s', async (_name, current, running) => {
    const paths = await layoutWith(current);
    await expect(refuseRunningSlot(paths, paths[running])).resolves.toBeUndefined();
  });

  it('agentbinary§3.6.2 current moved back without a restart: the running slot is refused', async () => {
    const paths = await layoutWith('blue');
    await expect(refuseRunningSlot(paths, paths.green)).rejects.toMatchObject({
      code: 'UPGRADE_REFUSED',
      path: paths.green,
    });
  });
});
