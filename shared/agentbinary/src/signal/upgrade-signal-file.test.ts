import { mkdtemp, rm, stat, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  clearUpgradeSignal,
  readUpgradeSignal,
  updateUpgradeSignal,
  writeUpgradeSignal,
} from './upgrade-signal-file.js';

let tmp: string;
let file: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'signal-'));
  file = path.join(tmp, 'etc/aks-flex-node/agent-upgrade-signal.json');
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('upgrade signal file', () => {
  it('agentbinary#8 pending → candidate → switchCommitted → failure reads back, mode 0600; clear removes it', async () => {
    await writeUpgradeSignal(file, {
      operationName: 'op-1',
      activeMachine: 'kube1',
      initiatingDaemonInstance: 'abc',
    });
    await updateUpgradeSignal(file, { candidatePath: '/r/lib/aks-flex-node/aks-flex-node-green' });
    await updateUpgradeSignal(file, { switchCommitted: true });
    await updateUpgradeSignal(file, { failure: 'daemon failed', recoveryRequired: true });
    expect(await readUpgradeSignal(file)).toEqual({
      operationName: 'op-1',
      activeMachine: 'kube1',
      initiatingDaemonInstance: 'abc',
      candidatePath: '/r/lib/aks-flex-node/aks-flex-node-green',
      switchCommitted: true,
      failure: 'daemon failed',
      recoveryRequired: true,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, 'utf8')).endsWith('}\n')).toBe(true);
    await clearUpgradeSignal(file);
    expect(await readUpgradeSignal(file)).toBeUndefined();
    await clearUpgradeSignal(file);
  });

  it('agentbinary#9 an active machine that could traverse paths is an error', async () => {
    await writeFile(
      path.join(tmp, 'bad.json'),
      JSON.stringify({ operationName: 'op', activeMachine: '../../etc' }),
    );
    await expect(readUpgradeSignal(path.join(tmp, 'bad.json'))).rejects.toThrow(
      /invalid active machine/,
    );
  });

  it.each([
    ['invalid JSON', '{"operationName":'],
    ['an empty operation name', '{"operationName":"  "}'],
  ])('%s is an error, never "no signal"', async (_name, content) => {
    await writeFile(path.join(tmp, 's.json'), content);
    await expect(readUpgradeSignal(path.join(tmp, 's.json'))).rejects.toThrow(/upgrade signal/);
  });

  it('keeps fields an earlier release wrote that this one does not know', async () => {
    await writeFile(
      path.join(tmp, 's.json'),
      JSON.stringify({ operationName: 'op', observedMachineGeneration: 7 }),
    );
    await updateUpgradeSignal(path.join(tmp, 's.json'), { switchCommitted: true });
    expect(JSON.parse(await readFile(path.join(tmp, 's.json'), 'utf8'))).toEqual({
      operationName: 'op',
      observedMachineGeneration: 7,
      switchCommitted: true,
    });
  });

  it('updating a missing signal is an error and creates nothing', async () => {
    await expect(updateUpgradeSignal(file, { switchCommitted: true })).rejects.toThrow(
      /no pending AgentUpgrade signal/,
    );
    expect(await readUpgradeSignal(file)).toBeUndefined();
  });
});
