import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  binaryFile,
  blueSlotFile,
  currentLinkFile,
  lastGoodLinkFile,
  managedBinaryDir,
  movingMarkerName,
  unitNames,
  type HostPaths,
} from '@aks-flex-node/layout';
import { acquireActivationLock } from '@aks-flex-node/lock';
import { createSilentLogger, isAgentError } from '@aks-flex-node/log';
import { describe, expect, it } from 'vitest';
import { resetAgent } from './reset-agent.js';
import { resetAgentUnderLock } from './reset-under-lock.js';
import { resetTargets } from './reset-targets.js';
import {
  exists,
  fakeEffects,
  installAgent,
  installHelpers,
  installUnitsAndState,
  interruptMove,
  newHost,
  parentFacts,
  treeSnapshot,
} from './test-fixtures.js';

const log = createSilentLogger();

/** A host layout to reset, and the binary a rejoin must still find afterwards. */
interface Case {
  name: string;
  lay: (paths: HostPaths) => Promise<void>;
  keptBinary: (paths: HostPaths) => string | undefined;
}

const cases: Case[] = [
  {
    name: 'daemon#8.1 installed under the host root',
    lay: (p) => installAgent(p.root),
    keptBinary: (p) => path.join(p.root, binaryFile),
  },
  {
    name: 'daemon#8.1 linked host: the root is the link to the legacy root',
    lay: async (p) => {
      await installAgent(p.legacy);
      await symlink(p.legacy, p.root);
    },
    keptBinary: (p) => path.join(p.root, binaryFile),
  },
  {
    name: 'daemon#8.1 moved host with helpers left under the legacy root too',
    lay: async (p) => {
      await installAgent(p.root);
      await installHelpers(p.legacy);
    },
    keptBinary: (p) => path.join(p.root, binaryFile),
  },
  {
    name: 'daemon#8.4 unfinished move: the copies, marker and staging go, the legacy install stays',
    lay: async (p) => {
      await installAgent(p.legacy);
      await interruptMove(p);
    },
    keptBinary: (p) => path.join(p.legacy, binaryFile),
  },
  {
    name: "scripts#4.2 an operator's link at the host root is kept, the helpers behind it go",
    lay: async (p) => {
      const elsewhere = path.join(p.prefix, 'data/agent');
      await installAgent(elsewhere);
      await symlink(elsewhere, p.root);
    },
    keptBinary: (p) => path.join(p.root, binaryFile),
  },
  {
    name: 'daemon#8.1 fresh host: nothing to remove',
    lay: () => Promise.resolve(),
    keptBinary: () => undefined,
  },
];

async function expectResetEndState(paths: HostPaths, parentBefore: string): Promise<void> {
  for (const target of resetTargets(paths)) expect(await exists(target), target).toBe(false);
  expect(await exists(path.join(paths.unitDir, unitNames.bootstrap))).toBe(false);
  expect(await exists(paths.staging)).toBe(false);
  expect(await exists(path.join(paths.root, movingMarkerName))).toBe(false);
  // Never read, never removed: a rejoin uses the same config.
  expect(await exists(paths.configFile)).toBe(true);
  expect(await parentFacts(paths)).toBe(parentBefore);
  expect(await readdir(path.join(paths.parent, 'artifacts'))).toEqual(['manifest.json']);
}

describe('resetAgent', () => {
  it.each(cases)('$name, twice', async ({ lay, keptBinary }) => {
    const paths = await newHost();
    await lay(paths);
    await installUnitsAndState(paths);
    const parentBefore = await parentFacts(paths);
    const { effects, network, calls } = fakeEffects(paths);

    const first = await resetAgent({ paths, effects, network, log });
    await expectResetEndState(paths, parentBefore);
    expect(first.keptBinary).toBe(keptBinary(paths));
    expect(first.removed).toContain(path.join(paths.unitDir, unitNames.agent));
    expect(first.removed).toContain(paths.hostRootAgentDigests);
    // The restart is cancelled and everything stopped before any path is removed.
    const beforeRemoval = calls.filter((c) => c.agentUnitPresent).map((c) => c.call);
    expect(beforeRemoval).toEqual([
      'cancel-restarts',
      `disable --now ${unitNames.bootstrap}`,
      `disable ${unitNames.agent} ${unitNames.agentSocket} ${unitNames.recovery} ${unitNames.localDnsNetwork}`,
      `stop ${unitNames.upgradeGuard}`,
      // The socket before the agent, so no connection starts it again meanwhile.
      `stop ${unitNames.agentSocket}`,
      `stop ${unitNames.agent}`,
      `stop ${unitNames.recovery}`,
      `stop ${unitNames.localDnsNetwork}`,
    ]);
    expect(calls.at(-1)?.call).toBe('daemon-reload');

    calls.length = 0;
    const second = await resetAgent({ paths, effects, network, log });
    expect(second.removed).toEqual([]);
    expect(second.keptBinary).toBe(first.keptBinary);
    await expectResetEndState(paths, parentBefore);
    // No unit file is left, so nothing is disabled again; stops of unloaded units are harmless.
    expect(calls.map((c) => c.call).filter((c) => c.startsWith('disable'))).toEqual([]);
  });

  it('daemon#8.1 a host without the first-boot unit gets no systemctl call about it', async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths, false);
    const { effects, network, calls } = fakeEffects(paths);
    await resetAgent({ paths, effects, network, log });
    expect(calls.map((c) => c.call).join('\n')).not.toContain(unitNames.bootstrap);
  });

  it('daemon#8.1 a failed disable of the first-boot unit keeps its file and removes nothing', async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths);
    const before = await treeSnapshot(paths);
    const { effects, network } = fakeEffects(paths, `disable --now ${unitNames.bootstrap}`);
    await expect(resetAgent({ paths, effects, network, log })).rejects.toThrow(/failed \(fake\)/);
    expect(await treeSnapshot(paths)).toEqual(before);
  });

  it("the daemon's own units are disabled and removed but left for the daemon to stop", async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths);
    const { effects, network, calls } = fakeEffects(paths);
    const runningUnits = [unitNames.agent, unitNames.agentSocket];
    await resetAgent({ paths, effects, network, log, runningUnits });
    const stops = calls.map((c) => c.call).filter((c) => c.startsWith('stop'));
    expect(stops).toEqual([
      `stop ${unitNames.upgradeGuard}`,
      `stop ${unitNames.recovery}`,
      `stop ${unitNames.localDnsNetwork}`,
    ]);
    expect(await exists(path.join(paths.unitDir, unitNames.agent))).toBe(false);
  });

  it('without systemd only files are removed', async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths);
    const report = await resetAgent({
      paths,
      effects: undefined,
      network: fakeEffects(paths).network,
      log,
    });
    for (const target of resetTargets(paths)) expect(await exists(target), target).toBe(false);
    expect(report.keptBinary).toBe(path.join(paths.root, binaryFile));
  });

  it.each([
    ['installed under the host root: removed', true],
    ['linked to the legacy root: kept, the agent still runs from there', false],
  ])(
    "issue24#1 install.sh's seed in /usr/local/bin, which a daemon run from it kept, on a host %s",
    async (_name, installed) => {
      const paths = await newHost();
      if (installed) {
        await installAgent(paths.root);
      } else {
        await installAgent(paths.legacy);
        await symlink(paths.legacy, paths.root);
      }
      await mkdir(path.dirname(paths.legacySeed), { recursive: true });
      await rm(paths.legacySeed, { force: true });
      await writeFile(paths.legacySeed, '#!/bin/sh\n', { mode: 0o755 });
      const report = await resetAgent({
        paths,
        effects: undefined,
        network: fakeEffects(paths).network,
        log,
      });
      expect(await exists(paths.legacySeed)).toBe(!installed);
      expect(report.removed.includes(paths.legacySeed)).toBe(installed);
    },
  );

  it('an unfinished move whose legacy root has no binary left keeps the copy and drops the marker', async () => {
    const paths = await newHost();
    await interruptMove(paths);
    await mkdir(path.join(paths.legacy, 'lib'), { recursive: true });
    const report = await resetAgent({
      paths,
      effects: undefined,
      network: fakeEffects(paths).network,
      log,
    });
    expect(report.keptBinary).toBe(path.join(paths.root, binaryFile));
    expect(await exists(path.join(paths.root, movingMarkerName))).toBe(false);
    expect(await exists(paths.staging)).toBe(false);
  });

  it('daemon#8.4 a move stopped in pass 2 (legacy binary removed, its slots not yet): the removal is finished, so no root is left half', async () => {
    const paths = await newHost();
    await installAgent(paths.legacy);
    await interruptMove(paths);
    // Pass 2 removes the binary first; it was killed after that one file.
    await rm(path.join(paths.legacy, binaryFile));
    await writeFile(path.join(paths.legacy, 'bin/other-tool'), 'other\n');
    const report = await resetAgent({
      paths,
      effects: undefined,
      network: fakeEffects(paths).network,
      log,
    });
    expect(report.keptBinary).toBe(path.join(paths.root, binaryFile));
    expect(report.removed).toEqual(
      expect.arrayContaining([
        path.join(paths.legacy, blueSlotFile),
        path.join(paths.legacy, currentLinkFile),
        path.join(paths.legacy, lastGoodLinkFile),
      ]),
    );
    expect(await exists(path.join(paths.legacy, managedBinaryDir))).toBe(false);
    expect(await readdir(path.join(paths.legacy, 'bin'))).toEqual(['other-tool']);
    expect(await exists(path.join(paths.root, movingMarkerName))).toBe(false);
    expect(await exists(path.join(paths.root, blueSlotFile))).toBe(true);
    // A second reset finds a plain installed host and changes nothing.
    expect(
      (await resetAgent({ paths, effects: undefined, network: fakeEffects(paths).network, log }))
        .removed,
    ).toEqual([]);
  });
});

describe('resetAgentUnderLock', () => {
  it('daemon#8.4 refuses at once while another holder has the activation lock, and changes nothing', async () => {
    const paths = await newHost();
    await installAgent(paths.root);
    await installUnitsAndState(paths);
    const before = await treeSnapshot(paths);
    const held = await acquireActivationLock({
      lockPath: paths.activationLock,
      goLockPath: paths.goUpgradeLock,
      log,
      purpose: 'a test',
    });
    try {
      const { effects, network, calls } = fakeEffects(paths);
      const error: unknown = await resetAgentUnderLock({ paths, effects, network, log }).catch(
        (e: unknown) => e,
      );
      expect(isAgentError(error, 'ACTIVATION_IN_PROGRESS')).toBe(true);
      expect(calls).toEqual([]);
      // The lock's own directory aside, not one path differs.
      const lockEntries = (line: string) => !/^run[/ ]/.test(line);
      expect((await treeSnapshot(paths)).filter(lockEntries)).toEqual(before.filter(lockEntries));
    } finally {
      await held.release();
    }
    const { effects, network } = fakeEffects(paths);
    await resetAgentUnderLock({ paths, effects, network, log });
    for (const target of resetTargets(paths)) expect(await exists(target), target).toBe(false);
  });
});
