import { copyFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stageAndSwitch } from '../upgrade/stage-and-switch.js';
import { rollbackUpgradeFiles } from '../upgrade/rollback-files.js';
import {
  fakeStageHost,
  installedLayout,
  log,
  newLayout,
  readSignal,
  type Layout,
} from '../upgrade/test-fixtures.js';
import { findActiveMachine, nspawnCopyPath } from './nspawn-copy.js';

// The Go releases keep a copy of the host binary in the active nspawn
// machine and record that machine in the signal; a Go daemon started as the
// candidate refuses a signal without it and compares the copy's digest with
// current's. These tests show this product keeps both as the Go releases do.

/** Gives `machine` a root filesystem whose copy is `source`, as a Go release leaves it. */
async function machineWithCopy(l: Layout, machine: 'kube1' | 'kube2', source: string) {
  const copy = nspawnCopyPath(l.paths.machinesDir, machine);
  await mkdir(path.dirname(copy), { recursive: true });
  await copyFile(source, copy);
}

describe('the active nspawn machine, as the Go releases keep it', () => {
  it('an upgrade records activeMachine and the machine copy follows current', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await machineWithCopy(l, 'kube2', l.paths.blue);
    const host = fakeStageHost(l);
    await stageAndSwitch(host.options);
    expect(await readSignal(l)).toMatchObject({
      activeMachine: 'kube2',
      candidatePath: l.paths.green,
      switchCommitted: true,
    });
    const copy = await readFile(nspawnCopyPath(l.paths.machinesDir, 'kube2'));
    expect(copy.equals(await readFile(l.paths.green))).toBe(true);
  });

  it('a rollback syncs the machine copy back to last-good', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    await machineWithCopy(l, 'kube1', l.paths.green);
    const signal = {
      operationName: 'op-go',
      activeMachine: 'kube1' as const,
      candidatePath: l.paths.green,
      switchCommitted: true,
    };
    const result = await rollbackUpgradeFiles(l.paths, signal, log);
    expect(result).toEqual({ rolledBack: true, current: l.paths.blue });
    const copy = await readFile(nspawnCopyPath(l.paths.machinesDir, 'kube1'));
    expect(copy.equals(await readFile(l.paths.blue))).toBe(true);
  });

  it('with no machine, the signal names none and nothing is created', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await stageAndSwitch(fakeStageHost(l).options);
    expect((await readSignal(l))?.activeMachine).toBeUndefined();
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBeUndefined();
  });

  it('with copies in both machines, the active one is the copy of the running binary', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await machineWithCopy(l, 'kube1', l.paths.green);
    await machineWithCopy(l, 'kube2', l.paths.blue);
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBe('kube2');
    await machineWithCopy(l, 'kube1', l.paths.blue);
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBeUndefined();
  });
});
