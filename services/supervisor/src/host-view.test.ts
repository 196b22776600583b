import { describe, expect, it } from 'vitest';
import type { HostRootResponse } from '@aks-flex-node/api';
import { createSilentLogger } from '@aks-flex-node/log';
import { createHostView, hostViewMaxAgeMs, hostViewQuietMs } from './host-view.js';

const linked: HostRootResponse = {
  path: '/opt/unbounded/agent',
  resolved: '/usr/local',
  planned: '/usr/local',
  state: 'linked',
  legacyReleased: false,
};

/** A host whose lock file and host root the test sets, and a queue it drives. */
function fakeHost() {
  const host = {
    clock: 0,
    lockHeld: false,
    busy: false,
    failLook: false,
    looks: 0,
    settled: [] as (() => Promise<void>)[],
  };
  const view = createHostView({
    describeHostRoot: () => {
      host.looks += 1;
      return host.failLook
        ? Promise.reject(new Error('EIO: the host root could not be read'))
        : Promise.resolve(linked);
    },
    isLockHeld: () => Promise.resolve(host.lockHeld),
    queue: {
      isBusy: () => host.busy,
      onSettled: (listener) => {
        host.settled.push(listener);
      },
    },
    log: createSilentLogger(),
    now: () => host.clock,
  });
  return { host, view };
}

describe('the kept host view', () => {
  it('the first read looks at the host; later fresh reads do not', async () => {
    const { host, view } = fakeHost();
    expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
    await view.read();
    await view.read();
    expect(host.looks).toBe(1);
  });

  it("this daemon's own mutation shows at once, without a look", async () => {
    const { host, view } = fakeHost();
    await view.read();
    host.busy = true;
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    expect(host.looks).toBe(1);
  });

  it('a lock another process took shows once the view is refreshed, and clears the same way', async () => {
    const { host, view } = fakeHost();
    await view.read();
    host.lockHeld = true;
    expect(await view.read()).toMatchObject({ activationInProgress: false });
    host.clock += hostViewQuietMs + 1;
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    host.lockHeld = false;
    host.clock += hostViewMaxAgeMs + 1;
    await expect.poll(async () => (await view.read()).activationInProgress).toBe(false);
  });

  it('every mutation of the queue ends in a refresh', async () => {
    const { host, view } = fakeHost();
    await view.read();
    expect(host.settled).toHaveLength(1);
    await host.settled[0]?.();
    expect(host.looks).toBe(2);
  });

  it('a failed look keeps the last view and is not retried by every read', async () => {
    const { host, view } = fakeHost();
    await view.read();
    host.failLook = true;
    await view.refresh();
    expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
    expect(host.looks).toBe(2);
  });
});
