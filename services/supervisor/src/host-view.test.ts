import { describe, expect, it } from 'vitest';
import type { HostRootResponse } from '@aks-flex-node/api';
import { createSilentLogger } from '@aks-flex-node/log';
import { createHostView } from './host-view.js';

const linked: HostRootResponse = {
  path: '/opt/unbounded/agent',
  resolved: '/usr/local',
  planned: '/usr/local',
  state: 'linked',
  legacyReleased: false,
};

/** A host whose lock file and host root the test sets;. */
function fakeHost() {
  const host = {
    lockHeld: false,
    busy: false,
    failLook: false,
    looks: 0,
  };
  const view = createHostView({
    describeHostRoot: () => {
      host.looks += 1;
      return host.failLook
        ? Promise.reject(new Error('EIO: the host root could not be read'))
        : Promise.resolve(linked);
    },
    isLockHeld: () => Promise.resolve(host.lockHeld),
    queue: { isBusy: () => host.busy },
    log: createSilentLogger(),
  });
  return { host, view };
}

describe('the host view status reads', () => {
  it('every read looks at the host: a lock another process took shows at once, and clears the same way', async () => {
    const { host, view } = fakeHost();
    expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
    host.lockHeld = true;
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    host.lockHeld = false;
    expect(await view.read()).toMatchObject({ activationInProgress: false });
    expect(host.looks).toBe(3);
  });

  it('reads that arrive while a look is in flight share it', async () => {
    const { host, view } = fakeHost();
    const answers = await Promise.all([view.read(), view.read(), view.read()]);
    expect(answers).toEqual(
      [0, 1, 2].map(() => ({ hostRoot: linked, activationInProgress: false })),
    );
    expect(host.looks).toBe(1);
  });

  it("this daemon's own mutation shows though the lock file is not looked at again", async () => {
    const { host, view } = fakeHost();
    host.busy = true;
    expect(await view.read()).toMatchObject({ activationInProgress: true });
  });

  it('a failed look answers the last view seen; with none, the read fails', async () => {
    const { host, view } = fakeHost();
    host.failLook = true;
    await expect(view.read()).rejects.toThrow(/EIO/);
    host.failLook = false;
    await view.read();
    host.failLook = true;
    expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
  });
});
