import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recoveryLayout } from './recovery-layout.js';

let tmp: string;
let root: string;
let legacy: string;
const slot = (base: string, name: string) =>
  path.join(base, 'lib/aks-flex-node', `aks-flex-node-${name}`);

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'recovery-layout-'));
  root = path.join(tmp, 'opt/unbounded/agent');
  legacy = path.join(tmp, 'usr/local');
  await mkdir(legacy, { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function linkRootToLegacy() {
  await mkdir(path.dirname(root), { recursive: true });
  await symlink(legacy, root);
}

describe('recoveryLayout', () => {
  it('agentbinary#48 a blue slot under the host root wins while the root resolves to legacy', async () => {
    await linkRootToLegacy();
    const layout = await recoveryLayout(slot(root, 'blue'), { root, legacy });
    expect(layout.root).toBe(root);
    expect(layout.lastGood).toBe(slot(root, 'last-good'));
  });

  it('agentbinary#49 a green slot under legacy wins while the root resolves to the host root', async () => {
    await mkdir(root, { recursive: true });
    const layout = await recoveryLayout(slot(legacy, 'green'), { root, legacy });
    expect(layout.root).toBe(legacy);
  });

  it.each([
    [
      'agentbinary#50 an executable that is not a slot',
      (base: string) => path.join(base, 'bin/aks-flex-node'),
    ],
    ['agentbinary#51 a look-alike name', (base: string) => `${slot(base, 'blue')}-old`],
  ])('%s falls back to the resolved root', async (_name, exe) => {
    await linkRootToLegacy();
    const layout = await recoveryLayout(exe(root), { root, legacy });
    expect(layout.root).toBe(legacy);
  });

  it('agentbinary#52 an unknown executable falls back to the resolved root', async () => {
    await mkdir(root, { recursive: true });
    // process.execPath here is the test runner's node, never a slot.
    const layout = await recoveryLayout(undefined, { root, legacy });
    expect(layout.root).toBe(root);
  });
});
