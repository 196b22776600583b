import { realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { currentLinkFile, greenSlotFile } from '@aks-flex-node/layout';
import { describe, expect, it } from 'vitest';
import { link, newLayout, touch } from '../test-fixtures.js';
import { systemMoveHost } from './move-host.js';

const host = systemMoveHost({
  rewriteUnits: () => Promise.reject(new Error('not called here')),
  queueRestart: () => Promise.reject(new Error('not called here')),
});

/** A copied root whose `current` leads to a script; `mode` decides whether it can run. */
async function copiedRoot(mode: number): Promise<string> {
  const l = await newLayout();
  await touch(path.join(l.root, greenSlotFile), '#!/bin/sh\necho green\n', mode);
  await link(path.join(l.root, currentLinkFile), path.join(l.root, greenSlotFile));
  return l.root;
}

describe('systemMoveHost', () => {
  it('hostroot#85 verify runs current under the root, which answers version', async () => {
    await expect(host.verify(await copiedRoot(0o755))).resolves.toBeUndefined();
  });

  it('hostroot#85 verify refuses the same script at 0644, naming it', async () => {
    const root = await copiedRoot(0o644);
    await expect(host.verify(root)).rejects.toThrow(path.join(root, currentLinkFile));
  });

  it('hostroot#85 verify refuses a root without current, naming it', async () => {
    const l = await newLayout();
    await expect(host.verify(l.root)).rejects.toThrow(path.join(l.root, currentLinkFile));
  });

  it('hostroot#83 the noexec probe names the mount holding the directory', async () => {
    const probe = await host.probeMount(os.tmpdir());
    const resolved = await realpath(os.tmpdir());
    expect(probe.mountPoint === '/' || resolved.startsWith(probe.mountPoint)).toBe(true);
    expect(typeof probe.noexec).toBe('boolean');
  });

  it('the executable is this process, resolved', async () => {
    expect(await host.executable()).toBe(await realpath(process.execPath));
  });
});
