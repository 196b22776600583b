import { describe, expect, it } from 'vitest';
import type { HostRootResponse } from '@aks-flex-node/api';
import { createLogger, createSilentLogger } from '@aks-flex-node/log';
import { createHostView } from './host-view.js';
import { armWatches, hostViewDirs, type WatchDirectory } from './host-view-watch.js';

const linked: HostRootResponse = {
  path: '/opt/unbounded/agent',
  resolved: '/usr/local',
  planned: '/usr/local',
  state: 'linked',
  legacyReleased: false,
};
const installed: HostRootResponse = { ...linked, resolved: linked.path, state: 'installed' };

function errno(code: string): Error {
  return Object.assign(new Error(`${code}: fake`), { code });
}

/**
 * Fake file events: directories the test can fire an event in, or make
 * unwatchable (`refuse`) or absent (`missing`).
 */
function fakeWatches() {
  const live = new Map<string, Set<() => void>>();
  const fs = {
    missing: new Set<string>(),
    refuse: new Set<string>(),
    sets: 0,
    closes: 0,
    watched: (): string[] => [...live.entries()].filter(([, s]) => s.size > 0).map(([d]) => d),
    fire(dir: string): void {
      for (const onEvent of [...(live.get(dir) ?? [])]) onEvent();
    },
  };
  const watchDirectory: WatchDirectory = (dir, onEvent) => {
    if (fs.missing.has(dir)) throw errno('ENOENT');
    if (fs.refuse.has(dir)) throw errno('ENOSPC');
    fs.sets += 1;
    const set = live.get(dir) ?? new Set();
    live.set(dir, set);
    set.add(onEvent);
    return {
      close: () => {
        fs.closes += 1;
        set.delete(onEvent);
      },
    };
  };
  return { fs, watchDirectory };
}

const dirs = ['/opt/unbounded', '/opt/unbounded/agent', '/run/aks-flex-node'];

/** A host whose lock file and host root the test sets, and the daemon's queue. */
function fakeHost(options: { watched?: boolean } = {}) {
  const host = {
    root: linked,
    lockHeld: false,
    busy: false,
    ended: 0,
    failLook: false,
    looks: 0,
    lines: [] as Record<string, unknown>[],
    /** Holds the next look until called. */
    holdLook: undefined as (() => void) | undefined,
    held: false,
  };
  const watches = fakeWatches();
  const log = createLogger({
    destination: {
      write: (line: string) => void host.lines.push(JSON.parse(line) as Record<string, unknown>),
    },
  });
  const view = createHostView({
    describeHostRoot: async () => {
      host.looks += 1;
      const root = host.root;
      if (host.held) await new Promise<void>((resolve) => (host.holdLook = resolve));
      if (host.failLook) throw new Error('EIO: the host root could not be read');
      return root;
    },
    isLockHeld: () => Promise.resolve(host.lockHeld),
    queue: { isBusy: () => host.busy, mutationsEnded: () => host.ended },
    ...(options.watched === false
      ? {}
      : { watch: { dirs, watchDirectory: watches.watchDirectory } }),
    log: options.watched === false ? createSilentLogger() : log,
  });
  return { host, view, fs: watches.fs };
}

describe('the host view status reads, kept and refreshed on file events', () => {
  it('looks once, then answers without looking while nothing changes', async () => {
    const { host, view, fs } = fakeHost();
    for (let i = 0; i < 5; i += 1) {
      expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
    }
    expect(host.looks).toBe(1);
    expect(fs.watched().sort()).toEqual([...dirs].sort());
  });

  it('a change another process makes in a watched directory shows in the next read', async () => {
    const { host, view, fs } = fakeHost();
    await view.read();
    host.root = installed;
    // No event: the kept view still answers (what a view without watches would do forever).
    expect((await view.read()).hostRoot).toEqual(linked);
    fs.fire('/opt/unbounded');
    expect((await view.read()).hostRoot).toEqual(installed);
    expect(host.looks).toBe(2);
    expect((await view.read()).hostRoot).toEqual(installed);
    expect(host.looks).toBe(2);
  });

  it('sets every watch again after an event, so a replaced directory is watched, not its old inode', async () => {
    const { view, fs } = fakeHost();
    await view.read();
    expect(fs.sets).toBe(3);
    fs.fire('/opt/unbounded/agent');
    await view.read();
    expect(fs.closes).toBe(3);
    expect(fs.sets).toBe(6);
    expect(fs.watched().sort()).toEqual([...dirs].sort());
  });

  it('watches a directory that is not there through its parent, and the directory itself once it comes', async () => {
    const { host, view, fs } = fakeHost();
    fs.missing.add('/opt/unbounded/agent');
    await view.read();
    expect(fs.watched().sort()).toEqual(['/opt/unbounded', '/run/aks-flex-node']);
    fs.missing.delete('/opt/unbounded/agent');
    host.root = installed;
    fs.fire('/opt/unbounded');
    expect((await view.read()).hostRoot).toEqual(installed);
    expect(fs.watched().sort()).toEqual([...dirs].sort());
  });

  it('a directory that cannot be watched: logged once, every read looks, and watching resumes when it can', async () => {
    const { host, view, fs } = fakeHost();
    fs.refuse.add('/run/aks-flex-node');
    await view.read();
    await view.read();
    expect(host.looks).toBe(2);
    const warnings = host.lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      path: '/run/aks-flex-node',
      msg: expect.stringMatching(/cannot watch \/run\/aks-flex-node.*max_user_watches/) as unknown,
    });
    expect(fs.watched()).toEqual([]);
    fs.refuse.delete('/run/aks-flex-node');
    await view.read();
    expect(host.looks).toBe(3);
    await view.read();
    expect(host.looks).toBe(3);
    expect(host.lines.some((line) => /by file events again/.test(String(line.msg)))).toBe(true);
  });

  it("the daemon's own change: each read looks while its mutation runs, and once more after it ended", async () => {
    const { host, view } = fakeHost();
    await view.read();
    host.busy = true;
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    expect(host.looks).toBe(3);
    host.root = installed;
    host.ended += 1;
    host.busy = false;
    expect(await view.read()).toEqual({ hostRoot: installed, activationInProgress: false });
    await view.read();
    expect(host.looks).toBe(4);
  });

  it("a lock another process holds: each read looks, since its holder's death raises no event", async () => {
    const { host, view, fs } = fakeHost();
    await view.read();
    host.lockHeld = true;
    fs.fire('/run/aks-flex-node');
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    // The holder was killed: the lock goes stale by age, with no event.
    host.lockHeld = false;
    expect(await view.read()).toMatchObject({ activationInProgress: false });
    await view.read();
    expect(host.looks).toBe(3);
  });

  it('an event during a look in flight: a read after it waits for a look that started after it', async () => {
    const { host, view, fs } = fakeHost();
    await view.read();
    host.held = true;
    fs.fire('/opt/unbounded');
    const first = view.read();
    await new Promise((resolve) => setImmediate(resolve));
    expect(host.holdLook).toBeDefined();
    host.held = false;
    host.root = installed;
    fs.fire('/opt/unbounded');
    const second = view.read();
    // The second read has found the first look in flight before it ends.
    await new Promise((resolve) => setImmediate(resolve));
    host.holdLook?.();
    // The first look began before the change: it answers the first read only.
    expect((await first).hostRoot).toEqual(linked);
    expect((await second).hostRoot).toEqual(installed);
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

  it('a failed look answers the last view seen and looks again at the next read; with none, the read fails', async () => {
    const { host, view, fs } = fakeHost();
    host.failLook = true;
    await expect(view.read()).rejects.toThrow(/EIO/);
    host.failLook = false;
    await view.read();
    host.failLook = true;
    fs.fire('/opt/unbounded');
    expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
    host.failLook = false;
    host.root = installed;
    expect((await view.read()).hostRoot).toEqual(installed);
  });

  it('without watches every read looks: a lock another process took shows at once', async () => {
    const { host, view } = fakeHost({ watched: false });
    expect(await view.read()).toEqual({ hostRoot: linked, activationInProgress: false });
    host.lockHeld = true;
    expect(await view.read()).toMatchObject({ activationInProgress: true });
    host.lockHeld = false;
    expect(await view.read()).toMatchObject({ activationInProgress: false });
    expect(host.looks).toBe(3);
  });

  it('after close, no watch is left and every read looks', async () => {
    const { host, view, fs } = fakeHost();
    await view.read();
    view.close();
    expect(fs.watched()).toEqual([]);
    await view.read();
    expect(host.looks).toBe(2);
  });
});

describe('the directories the host view watches', () => {
  it('every directory on the way to the root, the root, the legacy layout and the lock', () => {
    expect(
      hostViewDirs({
        root: '/opt/unbounded/agent',
        legacy: '/usr/local',
        activationLock: '/run/aks-flex-node/activation.lock',
      }),
    ).toEqual([
      '/opt/unbounded',
      '/opt',
      '/',
      '/opt/unbounded/agent',
      '/usr/local/lib/aks-flex-node',
      '/run/aks-flex-node',
    ]);
  });

  it('a failure other than a missing directory closes what was set and names the directory', () => {
    const { fs, watchDirectory } = fakeWatches();
    fs.refuse.add('/b');
    const armed = armWatches(['/a', '/b'], watchDirectory, () => undefined);
    expect(armed.watchers).toEqual([]);
    expect(armed.failure?.dir).toBe('/b');
    expect(fs.closes).toBe(1);
  });
});
