import { mkdir, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createFileInspector, type ActivationInspector } from './activation-inspector.js';
import { planActivation, type ActivationLayout } from './plan-activation.js';
import { activeService, expectFailure, listTree, stageCandidate } from './test-fixtures.js';
import {
  agentScript,
  at,
  installedLayout,
  legacyPlainBinary,
  link,
  newLayout,
  type BinaryName,
  type Layout,
} from '../upgrade/test-fixtures.js';

const inspector: ActivationInspector = {
  ...createFileInspector(),
  servicePlan: () => Promise.resolve(activeService),
};

interface PlanCase {
  setup: (l: Layout) => Promise<void>;
  /** The candidate's version; a slot's name stages a copy identical to that slot. */
  candidate?: string;
  withoutBinary?: boolean;
  active: BinaryName;
  target: BinaryName;
  rollback: BinaryName;
  initializeLayout: boolean;
  candidateChanged: boolean;
  repairLastGood: boolean;
  updateLastGood: boolean;
}

const plans: Record<string, PlanCase> = {
  'agentbinary#96 a legacy single binary: initialise, install into green, roll back to blue': {
    setup: legacyPlainBinary,
    active: 'binary',
    target: 'green',
    rollback: 'blue',
    initializeLayout: true,
    candidateChanged: true,
    repairLastGood: false,
    updateLastGood: true,
  },
  'agentbinary#100 current and last-good linked to the plain binary count as uninitialised': {
    setup: async (l) => {
      await legacyPlainBinary(l);
      await link(l.paths.current, l.paths.binary);
      await link(l.paths.lastGood, l.paths.binary);
    },
    active: 'binary',
    target: 'green',
    rollback: 'blue',
    initializeLayout: true,
    candidateChanged: true,
    repairLastGood: false,
    updateLastGood: true,
  },
  'agentbinary#101 current missing, last-good → blue: initialised from last-good': {
    setup: async (l) => {
      await agentScript(l.paths.blue, 'blue');
      await link(l.paths.lastGood, l.paths.blue);
    },
    active: 'blue',
    target: 'green',
    rollback: 'blue',
    initializeLayout: true,
    candidateChanged: true,
    repairLastGood: false,
    updateLastGood: true,
  },
  'agentbinary#102 an existing layout on blue: install into green, roll back to blue': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    active: 'blue',
    target: 'green',
    rollback: 'blue',
    initializeLayout: false,
    candidateChanged: true,
    repairLastGood: false,
    updateLastGood: true,
  },
  'agentbinary#104 without a plain binary path the plan is the same': {
    setup: (l) => installedLayout(l, 'green', 'blue'),
    withoutBinary: true,
    active: 'green',
    target: 'blue',
    rollback: 'green',
    initializeLayout: false,
    candidateChanged: true,
    repairLastGood: false,
    updateLastGood: true,
  },
  'agentbinary#105 an identical candidate, last-good → green: nothing to install or repair': {
    setup: (l) => installedLayout(l, 'blue', 'green'),
    candidate: 'blue',
    active: 'blue',
    target: 'blue',
    rollback: 'blue',
    initializeLayout: false,
    candidateChanged: false,
    repairLastGood: false,
    updateLastGood: false,
  },
  'agentbinary#106 an identical candidate without last-good: last-good is repaired': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await rm(l.paths.lastGood);
    },
    candidate: 'blue',
    active: 'blue',
    target: 'blue',
    rollback: 'blue',
    initializeLayout: false,
    candidateChanged: false,
    repairLastGood: true,
    updateLastGood: true,
  },
};

function layoutOf(l: Layout, withoutBinary = false): ActivationLayout {
  const { blue, green, current, lastGood, binary } = l.paths;
  return withoutBinary
    ? { blue, green, current, lastGood }
    : { blue, green, current, lastGood, binary };
}

describe('planActivation', () => {
  it.each(Object.entries(plans))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const candidatePath = await stageCandidate(l, row.candidate);
    const before = await listTree(l.tmp);
    const plan = await planActivation(
      { layout: layoutOf(l, row.withoutBinary), candidatePath },
      inspector,
    );
    expect(plan).toMatchObject({
      candidatePath,
      activePath: at(l, row.active),
      targetPath: at(l, row.target),
      rollbackPath: at(l, row.rollback),
      currentLink: l.paths.current,
      lastGoodLink: l.paths.lastGood,
      initializeLayout: row.initializeLayout,
      candidateChanged: row.candidateChanged,
      repairLastGood: row.repairLastGood,
      updateLastGood: row.updateLastGood,
      service: activeService,
    });
    expect(plan.binaryPath).toBe(row.withoutBinary === true ? undefined : l.paths.binary);
    expect(plan.actions[0]).toBe('verify candidate binary');
    expect(plan.actions.at(-1)).toBe(`roll back to ${plan.rollbackPath} if activation fails`);
    // Plans only: not a file, link, directory or lock file more or less.
    expect(await listTree(l.tmp)).toEqual(before);
  });

  it('agentbinary#96 the actions of a legacy host, in order', async () => {
    const l = await newLayout();
    await legacyPlainBinary(l);
    const plan = await planActivation(
      { layout: layoutOf(l), candidatePath: await stageCandidate(l) },
      inspector,
    );
    expect(plan.actions).toEqual([
      'verify candidate binary',
      'initialize managed binary layout',
      `install candidate into ${l.paths.green}`,
      `preserve ${l.paths.blue} as last-good`,
      `switch ${l.paths.current} to ${l.paths.green}`,
      'update daemon service configuration',
      'reload daemon service manager',
      'restart daemon service',
      'wait for daemon health',
      `roll back to ${l.paths.blue} if activation fails`,
    ]);
  });
});

interface RefusalCase {
  setup: (l: Layout) => Promise<void>;
  /** The candidate path, when not the staged one. */
  candidate?: (l: Layout) => string;
  code: string;
  message: string;
}

const refusals: Record<string, RefusalCase> = {
  'agentbinary#97 the legacy binary itself as the candidate must be staged separately': {
    setup: legacyPlainBinary,
    candidate: (l) => l.paths.binary,
    code: 'UPGRADE_REFUSED',
    message: 'staged separately',
  },
  'agentbinary#98 blue aliased to green while current → blue: the target is the active binary': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await link(l.paths.blue, l.paths.green);
    },
    code: 'UPGRADE_REFUSED',
    message: 'resolves to active binary',
  },
  'agentbinary#103 a directory at the plain binary path is not replaceable': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await rm(l.paths.binary);
      await mkdir(l.paths.binary);
    },
    code: 'UPGRADE_REFUSED',
    message: 'not a replaceable regular file or symlink',
  },
  'agentbinary§3.6.1 a regular file at last-good is refused': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await rm(l.paths.lastGood);
      await agentScript(l.paths.lastGood, 'blue');
    },
    code: 'UPGRADE_REFUSED',
    message: 'is not a symlink',
  },
  'agentbinary§3.6.1 a candidate without an execute bit is refused': {
    setup: async (l) => {
      await installedLayout(l, 'blue', 'blue');
      await writeFile(`${l.tmp}/plain`, 'not a program', { mode: 0o644 });
    },
    candidate: (l) => `${l.tmp}/plain`,
    code: 'UPGRADE_REFUSED',
    message: 'is not a regular executable file',
  },
  'agentbinary§3.6.1 a relative candidate path is refused': {
    setup: (l) => installedLayout(l, 'blue', 'blue'),
    candidate: () => 'root/aks-flex-node-release/aks-flex-node',
    code: 'INVALID_ARGUMENT',
    message: 'not an absolute, clean path',
  },
  'agentbinary§3.6.1 no executable binary anywhere in the layout': {
    setup: () => Promise.resolve(),
    code: 'NOT_FOUND',
    message: 'no executable existing agent binary found',
  },
};

describe('planActivation refusals', () => {
  it.each(Object.entries(refusals))('%s', async (_name, row) => {
    const l = await newLayout();
    await row.setup(l);
    const staged = await stageCandidate(l);
    const before = await listTree(l.tmp);
    await expectFailure(
      planActivation(
        { layout: layoutOf(l), candidatePath: row.candidate?.(l) ?? staged },
        inspector,
      ),
      row.code,
      row.message,
    );
    expect(await listTree(l.tmp)).toEqual(before);
  });
});
