import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readOnlyRemovalHint } from './read-only-removal-hint.js';

describe('readOnlyRemovalHint: the mount to remount, as mountinfo says', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ro-hint-')));
    await mkdir(path.join(tmp, 'usr/local/libexec'), { recursive: true });
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  // A host whose /usr is read-only and /usr/local part of it (Azure Container
  // Linux's shape), then one where /usr/local is its own mount.
  const mountinfo = (...mountPoints: string[]) =>
    [
      '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      ...mountPoints.map(
        (point, i) => `${30 + i} 22 8:2 / ${point} ro,relatime shared:2 - ext4 /dev/sda2 ro`,
      ),
    ].join('\n');

  it.each([
    ['usr', 'the mount /usr/local is part of'],
    ['usr/local', 'its own mount'],
  ])(
    'names the mount at %s (%s) and the command that stops the agent and its socket',
    async (mount) => {
      const target = path.join(tmp, 'usr/local/libexec/unbounded-localdns-network');
      const hint = await readOnlyRemovalHint(target, {
        mountinfo: mountinfo(path.join(tmp, mount)),
      });
      expect(hint).toBe(
        `${path.join(tmp, 'usr/local/libexec')} is read-only here: remount it read-write ` +
          `(\`mount -o remount,rw ${path.join(tmp, mount)}\`), stop the agent, whose sandbox may keep it read-only ` +
          '(`systemctl stop aks-flex-node-agent.socket aks-flex-node-agent.service`), then run `aks-flex-node reset` again',
      );
    },
  );

  it('says how to find the mount when the directory is gone', async () => {
    const target = path.join(tmp, 'gone/file');
    const hint = await readOnlyRemovalHint(target);
    expect(hint).toContain(
      `remount the filesystem holding it read-write (\`findmnt -T ${path.join(tmp, 'gone')}\` names it)`,
    );
  });
});
