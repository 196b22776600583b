import {
  mkdir,
  mkdtemp,
  readdir,
  readlink,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSilentLogger } from '@aks-flex-node/log';
import { snapshotGraceMs, sweepUpgradeLeftovers, type LeftoverPlaces } from './sweep-leftovers.js';

let tmp: string;
let places: LeftoverPlaces;
const log = createSilentLogger();

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sweep-'));
  places = {
    slotDir: path.join(tmp, 'opt/unbounded/agent/lib/aks-flex-node'),
    downloadsDir: path.join(tmp, 'var/lib/aks-flex-node/downloads'),
    stateDir: path.join(tmp, 'var/lib/aks-flex-node'),
  };
  await mkdir(places.slotDir, { recursive: true });
  await mkdir(places.downloadsDir, { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The blue/green layout as an installed host has it, plus an operator's file. */
async function installedSlots(): Promise<void> {
  const at = (name: string) => path.join(places.slotDir, name);
  await writeFile(at('aks-flex-node-blue'), 'blue binary', { mode: 0o755 });
  await writeFile(at('aks-flex-node-green'), 'green binary', { mode: 0o755 });
  await symlink(at('aks-flex-node-blue'), at('aks-flex-node-current'));
  await symlink(at('aks-flex-node-green'), at('aks-flex-node-last-good'));
  await writeFile(at('aks-flex-node-recovery.sh'), '#!/bin/sh\n', { mode: 0o750 });
  await writeFile(at('operator-note'), 'kept');
}

async function slotState(): Promise<Record<string, string>> {
  const state: Record<string, string> = {};
  for (const name of (await readdir(places.slotDir)).sort()) {
    const file = path.join(places.slotDir, name);
    state[name] = await readlink(file).catch(() => 'file');
  }
  return state;
}

describe('sweepUpgradeLeftovers (issue 12 item 3)', () => {
  it('issue12#3 removes partial downloads, partial and staged candidates and old snapshots; slots, links and other files stay', async () => {
    await installedSlots();
    const slotsBefore = await slotState();
    const leftovers = [
      path.join(places.slotDir, '.agent-upgrade-0123456789abcdef'),
      path.join(places.slotDir, '.aks-flex-node-candidate-0123456789ab'),
      path.join(places.downloadsDir, 'agent-upgrade-0123456789abcdef.tar.gz'),
      path.join(places.downloadsDir, 'agent-upgrade-fedcba9876543210.tar.gz'),
    ];
    for (const file of leftovers) await writeFile(file, 'partial');
    const oldSnapshot = path.join(places.stateDir, 'host-agent-activation-AbC123');
    const freshSnapshot = path.join(places.stateDir, 'host-agent-activation-XyZ789');
    for (const dir of [oldSnapshot, freshSnapshot]) {
      await mkdir(dir);
      await writeFile(path.join(dir, 'candidate'), 'binary');
    }
    const longAgo = new Date(Date.now() - snapshotGraceMs - 60_000);
    await utimes(oldSnapshot, longAgo, longAgo);
    const operatorFiles = [
      path.join(places.downloadsDir, 'my-release.tar.gz'),
      path.join(places.stateDir, 'first-boot-complete'),
    ];
    for (const file of operatorFiles) await writeFile(file, 'kept');

    for (let run = 1; run <= 2; run++) {
      const removed = await sweepUpgradeLeftovers(places, log);
      expect(removed.sort()).toEqual(run === 1 ? [...leftovers, oldSnapshot].sort() : []);
      expect(await slotState()).toEqual(
        Object.fromEntries(Object.entries(slotsBefore).filter(([name]) => !name.startsWith('.'))),
      );
      expect((await readdir(places.downloadsDir)).sort()).toEqual(['my-release.tar.gz']);
      expect((await readdir(places.stateDir)).sort()).toEqual([
        'downloads',
        'first-boot-complete',
        'host-agent-activation-XyZ789',
      ]);
    }
  });

  it('issue12#3 a host without downloads or state directories is swept without error', async () => {
    await rm(path.join(tmp, 'var'), { recursive: true });
    await installedSlots();
    const before = await slotState();
    expect(await sweepUpgradeLeftovers(places, log)).toEqual([]);
    expect(await slotState()).toEqual(before);
  });
});
