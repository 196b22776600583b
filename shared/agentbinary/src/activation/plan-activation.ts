import path from 'node:path';
import type { ActivationPlan } from '@aks-flex-node/api';
import { cleanPath } from '@aks-flex-node/fs';
import { AgentError } from '@aks-flex-node/log';
import type { AgentBinaryPaths } from '../agent-binary-paths.js';
import { listActivationActions } from './activation-actions.js';
import type { ActivationInspector } from './activation-inspector.js';

/** The layout paths a direct activation changes. The plain binary is optional (spec #104). */
export type ActivationLayout = Pick<AgentBinaryPaths, 'blue' | 'green' | 'current' | 'lastGood'> & {
  binary?: string;
};

/** What to plan for. */
export interface PlanRequest {
  layout: ActivationLayout;
  /** The candidate as the operator named it: shown, and compared with the active binary. */
  candidatePath: string;
  /** The bytes to install: the private snapshot during an activation; the candidate itself in a preflight. */
  contentPath?: string;
}

/**
 * Plans a direct activation without changing anything (spec agentbinary
 * §3.6.1): no file, link, directory, lock or unit is created. The activation
 * runs it again under the activation lock, because the host can change
 * between a preflight and the activation.
 *
 * Throws INVALID_ARGUMENT (paths), UPGRADE_REFUSED (the candidate, the
 * layout), NOT_FOUND (no active binary), ACTIVATION_IN_PROGRESS (a pending
 * AgentUpgrade, from the service preflight) or HOST_ROOT_IO.
 */
export async function planActivation(
  request: PlanRequest,
  inspector: ActivationInspector,
): Promise<ActivationPlan> {
  const { layout } = request;
  requireCleanAbsolute(request.candidatePath, 'the candidate');
  for (const file of layoutFiles(layout)) requireCleanAbsolute(file, 'a layout path');
  const { active, initialized, changed } = await compareWithActive(request, inspector);
  const slots = await chooseSlots(layout, inspector, active, initialized, changed);
  for (const file of layoutFiles(layout)) await requireReplaceable(inspector, file);
  const lastGoodTarget = await readLastGoodLink(inspector, layout.lastGood);
  // Nothing else changes, so a missing last-good is the one thing to repair.
  const repairLastGood =
    initialized && !changed && (await inspector.resolve(layout.lastGood)) === undefined;
  const plan: ActivationPlan = {
    candidatePath: request.candidatePath,
    activePath: active,
    ...slots,
    currentLink: layout.current,
    lastGoodLink: layout.lastGood,
    initializeLayout: !initialized,
    candidateChanged: changed,
    repairLastGood,
    updateLastGood: !initialized || changed || repairLastGood,
    service: await inspector.servicePlan(),
    actions: [],
  };
  if (layout.binary !== undefined) plan.binaryPath = layout.binary;
  if (lastGoodTarget !== undefined) plan.lastGoodTarget = lastGoodTarget;
  plan.actions = listActivationActions(plan);
  return plan;
}

/**
 * The candidate against what runs now (spec §3.6.1 steps 2–5): both must be
 * regular executables, and on a layout still to be initialised the candidate
 * must not be the active binary itself (rationale §8.15: activating the only
 * copy of the running binary would leave no rollback target).
 */
async function compareWithActive(
  request: PlanRequest,
  inspector: ActivationInspector,
): Promise<{ active: string; initialized: boolean; changed: boolean }> {
  const candidate = await requireExecutable(inspector, request.candidatePath);
  const content =
    request.contentPath === undefined
      ? candidate
      : await requireExecutable(inspector, request.contentPath);
  const { active, initialized } = await discoverActive(request.layout, inspector);
  if (!initialized && candidate === active) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the candidate ${request.candidatePath} is the active binary ${active}; it must be staged separately`,
      {
        path: request.candidatePath,
        hint: 'copy the new release into a directory only root can write (for example `install -d -m 0700 /root/aks-flex-node-release`, then `install -m 0755 NEW-BINARY /root/aks-flex-node-release/`) and name that copy',
      },
    );
  }
  const changed = (await inspector.sha256(content)) !== (await inspector.sha256(active));
  return { active, initialized, changed };
}

function layoutFiles(layout: ActivationLayout): string[] {
  const files = [layout.blue, layout.green, layout.current, layout.lastGood];
  return layout.binary === undefined ? files : [layout.binary, ...files];
}

function requireCleanAbsolute(file: string, what: string): void {
  if (path.isAbsolute(file) && cleanPath(file) === file) return;
  throw new AgentError('INVALID_ARGUMENT', `${what} ${file} is not an absolute, clean path`, {
    path: file,
    hint: `name it by its absolute path, for example ${cleanPath(path.resolve(file))}`,
  });
}

async function requireExecutable(inspector: ActivationInspector, file: string): Promise<string> {
  const resolved = await inspector.resolve(file);
  if (resolved !== undefined && (await inspector.isRegularExecutable(resolved))) return resolved;
  throw new AgentError(
    'UPGRADE_REFUSED',
    resolved === undefined
      ? `the candidate ${file} does not exist`
      : `the candidate ${file} is not a regular executable file`,
    { path: file, hint: `check it with \`ls -lL ${file}\`; it needs an execute bit` },
  );
}

/**
 * The binary that runs now (spec §3.6.1 step 3): what `current` resolves to,
 * and the layout is initialised when that is a slot. Without `current`, the
 * first executable among last-good, blue, green and the plain binary, on a
 * layout that still has to be initialised.
 */
async function discoverActive(
  layout: ActivationLayout,
  inspector: ActivationInspector,
): Promise<{ active: string; initialized: boolean }> {
  const current = await inspector.resolve(layout.current);
  if (current !== undefined) {
    if (!(await inspector.isRegularExecutable(current))) {
      throw new AgentError(
        'UPGRADE_REFUSED',
        `${layout.current} resolves to ${current}, which is not a regular executable file`,
        { path: layout.current, hint: `check it with \`ls -lL ${layout.current}\`` },
      );
    }
    const slots = [await inspector.resolve(layout.blue), await inspector.resolve(layout.green)];
    return { active: current, initialized: slots.includes(current) };
  }
  for (const file of [layout.lastGood, layout.blue, layout.green, layout.binary]) {
    if (file === undefined) continue;
    const resolved = await inspector.resolve(file);
    if (resolved !== undefined && (await inspector.isRegularExecutable(resolved))) {
      return { active: resolved, initialized: false };
    }
  }
  throw new AgentError(
    'NOT_FOUND',
    `no executable existing agent binary found: ${layout.current} is missing and nothing else runs`,
    { path: layout.current, hint: 'install the agent with `aks-flex-node start` instead' },
  );
}

/**
 * Where the candidate goes and what a failure returns to (spec §3.6.1 steps
 * 6–7). An uninitialised layout keeps the active binary in blue as the
 * rollback target; an initialised one writes the slot `current` does not
 * name. A slot aliased to the other through a link is refused: the install
 * would overwrite what runs.
 */
async function chooseSlots(
  layout: ActivationLayout,
  inspector: ActivationInspector,
  active: string,
  initialized: boolean,
  changed: boolean,
): Promise<{ targetPath: string; rollbackPath: string }> {
  let slots: { targetPath: string; rollbackPath: string };
  if (!initialized) {
    slots = { targetPath: changed ? layout.green : layout.blue, rollbackPath: layout.blue };
  } else if (!changed) {
    slots = { targetPath: active, rollbackPath: active };
  } else {
    const activeIsBlue = (await inspector.resolve(layout.blue)) === active;
    slots = { targetPath: activeIsBlue ? layout.green : layout.blue, rollbackPath: active };
  }
  if (changed && (await inspector.resolve(slots.targetPath)) === active) {
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the install target ${slots.targetPath} resolves to active binary ${active}`,
      {
        path: slots.targetPath,
        hint: `make ${layout.blue} and ${layout.green} regular files, then retry`,
      },
    );
  }
  return slots;
}

/** A directory (or a device, a socket) at a layout name is never the agent's to replace. */
async function requireReplaceable(inspector: ActivationInspector, file: string): Promise<void> {
  const kind = await inspector.entryKind(file);
  if (kind === 'absent' || kind === 'file' || kind === 'symlink') return;
  throw new AgentError(
    'UPGRADE_REFUSED',
    `${file} is not a replaceable regular file or symlink (it is a ${kind})`,
    { path: file, hint: `move ${file} out of the way, then retry` },
  );
}

/** last-good's link text, so a failed switch can put it back exactly; a file there is refused. */
async function readLastGoodLink(
  inspector: ActivationInspector,
  lastGood: string,
): Promise<string | undefined> {
  const kind = await inspector.entryKind(lastGood);
  if (kind === 'absent') return undefined;
  if (kind === 'symlink') return inspector.readLink(lastGood);
  throw new AgentError('UPGRADE_REFUSED', `${lastGood} is not a symlink (it is a ${kind})`, {
    path: lastGood,
    hint: `point it at the binary to roll back to: ln -sfn <slot> ${lastGood}`,
  });
}
