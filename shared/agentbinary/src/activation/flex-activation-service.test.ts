import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ActivationServicePlan } from '@aks-flex-node/api';
import { hostPathsUnder, unitNames, type HostPaths } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { describe, expect, it, onTestFinished } from 'vitest';
import { agentBinaryPathsUnder } from '../agent-binary-paths.js';
import { serviceAssetsForHost, writeServiceAssets } from '../install/service-assets.js';
import { fakeServiceHost, type FakeHostScript } from './fake-service-host.js';
import { createFlexActivationService } from './flex-activation-service.js';

const log = createSilentLogger();
const unit = unitNames.agent;

/** A host in a temp dir; `units` says whether the agent's units are installed and current. */
async function newHost(units: 'none' | 'current' | 'stale'): Promise<HostPaths> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'flex-activation-'));
  onTestFinished(() => rm(tmp, { recursive: true, force: true }));
  const paths = hostPathsUnder(tmp);
  if (units === 'none') return paths;
  await writeServiceAssets(await serviceAssetsForHost(paths, binaryPathsOf(paths)), log);
  if (units === 'stale') await writeFile(path.join(paths.unitDir, unit), '[Unit]\n');
  return paths;
}

const binaryPathsOf = (paths: HostPaths) => agentBinaryPathsUnder(paths.root);

function serviceOn(paths: HostPaths, script: FakeHostScript = {}) {
  const fake = fakeServiceHost(script);
  const service = createFlexActivationService({
    paths,
    binaryPaths: binaryPathsOf(paths),
    host: fake.host,
    log,
  });
  return { fake, service };
}

interface PreflightCase {
  units: 'none' | 'current' | 'stale';
  script?: FakeHostScript;
  plan: ActivationServicePlan;
}

const preflights: Record<string, PreflightCase> = {
  'agentbinary#27 no unit installed: nothing to update, reload or restart, and no systemctl': {
    units: 'none',
    plan: { installed: false, wasActive: false, updateRequired: false },
  },
  'agentbinary§3.6.3 an active unit whose assets are current': {
    units: 'current',
    plan: { installed: true, wasActive: true, updateRequired: false },
  },
  'agentbinary§3.6.3 an inactive unit whose agent unit differs': {
    units: 'stale',
    script: { activeState: 'inactive' },
    plan: { installed: true, wasActive: false, updateRequired: true },
  },
  'agentbinary§3.6.3 a unit file systemd has not loaded counts as not active': {
    units: 'current',
    script: { loadState: 'not-found', activeState: 'inactive' },
    plan: { installed: true, wasActive: false, updateRequired: false },
  },
  'agentbinary§3.6.3 a failed unit counts as active, so it is restarted': {
    units: 'current',
    script: { activeState: 'failed' },
    plan: { installed: true, wasActive: true, updateRequired: false },
  },
};

describe('the Flex activation service', () => {
  it.each(Object.entries(preflights))('%s', async (_name, row) => {
    const paths = await newHost(row.units);
    const { fake, service } = serviceOn(paths, row.script);
    const before = await readdir(paths.prefix, { recursive: true });
    expect(await service.preflight()).toEqual(row.plan);
    expect(fake.calls).toEqual(row.units === 'none' ? [] : [`show ${unit}`]);
    // A preflight reads only.
    expect(await readdir(paths.prefix, { recursive: true })).toEqual(before);
  });

  it('agentbinary#29 a pending AgentUpgrade signal refuses the preflight', async () => {
    const paths = await newHost('current');
    await mkdir(paths.configDir, { recursive: true });
    await writeFile(paths.signalFile, '{"operationName":"op-1"}');
    const attempt = serviceOn(paths).service.preflight();
    await expect(attempt).rejects.toThrow(`signal exists at ${paths.signalFile}`);
    await expect(attempt).rejects.toMatchObject({ code: 'ACTIVATION_IN_PROGRESS' });
  });

  it('agentbinary§3.6.3 an unknown unit state is an error, not a guess', async () => {
    const paths = await newHost('current');
    const attempt = serviceOn(paths, { activeState: 'maintenance' }).service.preflight();
    await expect(attempt).rejects.toMatchObject({ code: 'SYSTEMD_FAILED' });
  });

  const active: ActivationServicePlan = { installed: true, wasActive: true, updateRequired: true };
  const stopped: ActivationServicePlan = {
    installed: true,
    wasActive: false,
    updateRequired: false,
  };
  const absent: ActivationServicePlan = {
    installed: false,
    wasActive: false,
    updateRequired: false,
  };

  it.each<[string, ActivationServicePlan, FakeHostScript, string[]]>([
    [
      'agentbinary§3.6.3 an active service: reload, clear the failure counter, restart',
      active,
      {},
      ['daemon-reload', `reset-failed ${unit}`, `restart ${unit}`],
    ],
    [
      'agentbinary§4.1 a denied reset-failed does not stop the restart',
      active,
      { resetFailed: () => Promise.reject(new Error('access denied')) },
      ['daemon-reload', `reset-failed ${unit}`, `restart ${unit}`],
    ],
    [
      'agentbinary§8.16 an inactive service is reloaded and left stopped',
      stopped,
      {},
      ['daemon-reload'],
    ],
    ['agentbinary§3.6.3 no installed unit: systemd is not asked anything', absent, {}, []],
  ])('%s', async (_name, plan, script, calls) => {
    const paths = await newHost('current');
    const { fake, service } = serviceOn(paths, script);
    await service.reload(plan);
    await service.restart(plan, new AbortController().signal);
    expect(fake.calls).toEqual(calls);
  });

  it.each<[string, ActivationServicePlan, number]>([
    [
      'agentbinary§3.6.3 an active service is waited for until it runs the binary 3 s',
      active,
      3_000,
    ],
    ['agentbinary§8.16 a service left stopped is not waited for', stopped, 0],
  ])('%s', async (_name, plan, waited) => {
    const paths = await newHost('current');
    const target = binaryPathsOf(paths).green;
    const { fake, service } = serviceOn(paths, { mainPid: () => 42, executable: () => target });
    await service.waitHealthy(plan, target, new AbortController().signal);
    expect(fake.elapsed()).toBe(waited);
  });

  it.each<[string, ActivationServicePlan, FakeHostScript, string | undefined]>([
    [
      'agentbinary§3.6.2 the binary the main process executes',
      active,
      { mainPid: () => 42, executable: () => '/b' },
      '/b',
    ],
    ['agentbinary§3.6.2 no main process: nothing runs', active, { mainPid: () => 0 }, undefined],
    ['agentbinary§3.6.2 no installed unit: nothing runs', absent, { mainPid: () => 42 }, undefined],
  ])('%s', async (_name, plan, script, running) => {
    const paths = await newHost('current');
    expect(await serviceOn(paths, script).service.runningExecutable(plan)).toBe(running);
  });

  it('agentbinary§5.5 prepare rewrites stale assets, and only on a host that has them', async () => {
    const stale = await newHost('stale');
    await serviceOn(stale).service.prepare(active);
    expect(await serviceOn(stale).service.preflight()).toMatchObject({ updateRequired: false });
    const bare = await newHost('none');
    await serviceOn(bare).service.prepare(absent);
    expect(await readdir(bare.prefix)).toEqual([]);
  });
});
