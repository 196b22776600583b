import { copyFile, mkdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repairForWrite } from '@aks-flex-node/fs';
import { judgeStartedUpgrade } from '../upgrade/judge-started-upgrade.js';
import { rollbackUpgradeFiles, stageAndSwitch } from '../upgrade/stage-and-switch.js';
import {
  fakeJudgeHost,
  fakeStageHost,
  installedLayout,
  log,
  newLayout,
  readSignal,
  writeSignal,
  type Layout,
} from '../upgrade/test-fixtures.js';
import {
  findActiveMachine,
  machineCopyRepair,
  nspawnCopyPath,
  syncNspawnCopy,
} from './nspawn-copy.js';

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

  it('with copies in both machines, the active one is the copy of the running binary; kube1 when both are', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await machineWithCopy(l, 'kube1', l.paths.green);
    await machineWithCopy(l, 'kube2', l.paths.blue);
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBe('kube2');
    // Both hold it, as on a node the Go releases provisioned and never
    // upgraded since (the e2e harness's real-shaped node): kube1 is named, so
    // the upgrade keeps its copy (naming neither left it behind).
    await machineWithCopy(l, 'kube1', l.paths.blue);
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBe('kube1');
    await machineWithCopy(l, 'kube1', l.paths.green);
    await machineWithCopy(l, 'kube2', l.paths.green);
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBeUndefined();
  });

  it("with neither copy the running binary's, the one holding a slot's binary is active (an upgrade synced it, its rollback could not)", async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await machineWithCopy(l, 'kube1', l.paths.green);
    // kube2 keeps an older release's copy, as the Go releases leave an inactive machine.
    await machineWithCopy(l, 'kube2', l.paths.blue);
    await writeFile(nspawnCopyPath(l.paths.machinesDir, 'kube2'), '#!/bin/sh\necho older\n');
    const slots = [l.paths.blue, l.paths.green];
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue, slots)).toBe('kube1');
    expect(await findActiveMachine(l.paths.machinesDir, l.paths.blue)).toBeUndefined();
  });
});

/** Makes the machine's copy a directory: no write can replace it, as an immutable file refuses one. */
async function unwritableCopy(l: Layout, machine: 'kube1' | 'kube2') {
  await mkdir(path.join(nspawnCopyPath(l.paths.machinesDir, machine), 'in-the-way'), {
    recursive: true,
  });
}

/**
 * A switched upgrade to green whose candidate has started, with kube1's copy
 * holding the named slot's bytes: the judge's digest comparison decides.
 */
async function candidateStartedWithCopy(copyOf: 'blue' | 'green') {
  const l = await newLayout();
  await installedLayout(l, 'green', 'blue');
  await machineWithCopy(l, 'kube1', l.paths[copyOf]);
  await writeSignal(l, {
    activeMachine: 'kube1',
    initiatingDaemonInstance: 'old',
    candidatePath: l.paths.green,
    switchCommitted: true,
  });
  return { l, host: fakeJudgeHost(l, l.paths.green, 'candidate') };
}

describe('issue21 the machine copy is secondary to the host links', () => {
  it('a copy that already holds the source is not rewritten, so a rollback with nothing to undo there writes nothing', async () => {
    const l = await newLayout();
    await installedLayout(l, 'blue', 'blue');
    await machineWithCopy(l, 'kube1', l.paths.blue);
    const copy = nspawnCopyPath(l.paths.machinesDir, 'kube1');
    const before = await stat(copy);
    expect(await syncNspawnCopy(l.paths.machinesDir, 'kube1', l.paths.blue, log)).toBe('unchanged');
    expect((await stat(copy)).ino).toBe(before.ino);
    expect(await syncNspawnCopy(l.paths.machinesDir, 'kube2', l.paths.blue, log)).toBe(
      'no-machine',
    );
  });

  it('a rollback whose copy cannot be written still restores the links, and names the copy and its repair', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    await unwritableCopy(l, 'kube1');
    const signal = {
      operationName: 'op-copy',
      activeMachine: 'kube1' as const,
      candidatePath: l.paths.green,
      switchCommitted: true,
    };
    for (let run = 0; run < 2; run += 1) {
      const result = await rollbackUpgradeFiles(l.paths, signal, log);
      expect(result).toMatchObject({ rolledBack: true, current: l.paths.blue });
      expect(result.machineCopy?.machine).toBe('kube1');
      expect(result.machineCopy?.error.path).toBe(nspawnCopyPath(l.paths.machinesDir, 'kube1'));
      expect(result.machineCopy?.error.message).toMatch(/sync the nspawn machine kube1's copy/);
      expect(await readlink(l.paths.current)).toBe(l.paths.blue);
    }
  });

  it('the judge records the rollback when only the copy could not be restored, and clears the signal', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    await unwritableCopy(l, 'kube1');
    await writeSignal(l, {
      activeMachine: 'kube1',
      candidatePath: l.paths.green,
      switchCommitted: true,
      failure: 'the upgraded daemon exited',
      recoveryRequired: true,
    });
    const host = fakeJudgeHost(l, l.paths.blue, 'last-good');
    expect(await judgeStartedUpgrade(host.options)).toBe('rolled-back');
    expect(host.records[0]?.message).toMatch(
      /the upgraded daemon exited; the machine kube1's copy of the agent was not restored/,
    );
    expect(await readSignal(l)).toBeUndefined();
    expect(await readlink(l.paths.current)).toBe(l.paths.blue);
  });

  it('agentbinary§3.7 step 3 the judge fails an upgrade whose machine copy is not current, and rolls it back', async () => {
    const { l, host } = await candidateStartedWithCopy('blue');
    expect(await judgeStartedUpgrade(host.options)).toBe('restart-scheduled');
    const judged = await readSignal(l);
    expect(judged?.failure).toMatch(/^upgraded host and nspawn agent binaries do not match/);
    expect(judged?.recoveryRequired).toBe(true);
    expect(await readlink(l.paths.current)).toBe(l.paths.blue);
  });

  it('the judge passes an upgrade whose machine copy is current', async () => {
    const { host } = await candidateStartedWithCopy('green');
    expect(await judgeStartedUpgrade(host.options)).toBe('succeeded');
  });

  it('a rollback whose links cannot be restored keeps the signal and says what repairs it', async () => {
    const l = await newLayout();
    await installedLayout(l, 'green', 'blue');
    await writeSignal(l, {
      candidatePath: l.paths.green,
      switchCommitted: true,
      failure: 'the upgraded daemon exited',
      recoveryRequired: true,
    });
    // last-good gone: the links cannot be restored until it is back.
    await rm(l.paths.lastGood);
    const host = fakeJudgeHost(l, l.paths.blue, 'last-good');
    const error: unknown = await judgeStartedUpgrade(host.options).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: 'UPGRADE_FAILED' });
    expect((error as Error).message).toMatch(/rollback of AgentUpgrade .* could not finish/);
    expect((error as { hint?: string }).hint).toMatch(/recover-agent-upgrade/);
    expect((await readSignal(l))?.failure).toBe('the upgraded daemon exited');
  });
});

const errno = (code: string) => Object.assign(new Error(code), { code });

describe('issue22 the repair a failed write names, by its cause', () => {
  it.each([
    ['EROFS', /mount -o remount,rw/],
    ['EPERM', /chattr -i -a \/m\/bin\/f \/m\/bin/],
    ['ENOSPC', /df -h \/m\/bin/],
    ['EACCES', /journalctl -k --grep denied/],
    ['EIO', /make \/m\/bin writable for root/],
  ])('%s', (code, repair) => {
    expect(repairForWrite('/m/bin/f', errno(code))).toMatch(repair);
  });

  it("EROFS on a machine's copy: restarting the agent gives its unit the machines that exist now", () => {
    expect(machineCopyRepair('/m/bin/f', errno('EROFS'))).toMatch(
      /^run `systemctl restart aks-flex-node-agent`/,
    );
  });
});
