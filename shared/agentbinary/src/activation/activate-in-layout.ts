import type { ActivationPlan, ActivationResult } from '@aks-flex-node/api';
import { installFile, replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import { resolveIfPresent } from '../resolve-link.js';
import type { FileInspector } from './activation-inspector.js';
import type { ActivationService } from './activation-service.js';
import { planActivation, type ActivationLayout } from './plan-activation.js';
import { switchActivationLinks } from './switch-activation-links.js';

/** A failed activation's rollback runs on its own clock, whatever cancelled the caller (spec §3.6.2). */
const rollbackTimeoutMs = 60_000;

/** What {@link activateInLayout} needs. The caller holds the activation lock. */
export interface ActivateInLayoutOptions {
  layout: ActivationLayout;
  /** The candidate as the operator named it. */
  candidatePath: string;
  /** The private snapshot of its bytes ({@link snapshotCandidate}): what is installed. */
  snapshotPath: string;
  files: FileInspector;
  service: ActivationService;
  /** Runs a binary (`version`) and refuses one that cannot serve this host. */
  verify(binary: string): Promise<void>;
  log: Logger;
  /** Cancels the activation; a rollback it causes still runs to the end. */
  signal?: AbortSignal;
}

/**
 * Activates a separately staged binary on the host (spec agentbinary §3.6.2):
 * plans again under the caller's lock, verifies the snapshot, installs it in
 * the slot nothing runs from, switches the links, and restarts the service
 * if it ran; when the restart or the health wait fails, `current` goes back
 * to the rollback path and the service is restarted on it. An identical
 * candidate on an initialised layout installs nothing ("repair" mode).
 *
 * Throws what {@link planActivation} throws, UPGRADE_REFUSED (the candidate
 * does not run, or the target is what the service runs now) and
 * UPGRADE_FAILED (the switch or the restart failed; the message says whether
 * the rollback succeeded).
 */
export async function activateInLayout(
  options: ActivateInLayoutOptions,
): Promise<ActivationResult> {
  const { layout, service, log } = options;
  const signal = options.signal ?? new AbortController().signal;
  const plan = await planActivation(
    { layout, candidatePath: options.candidatePath, contentPath: options.snapshotPath },
    { ...options.files, servicePlan: () => service.preflight() },
  );
  await options.verify(options.snapshotPath);
  await refuseRunningTarget(plan, options);
  const isLastGoodProtected = await installCandidate(plan, options);
  await service.prepare(plan.service);
  await switchActivationLinks(plan, layout, isLastGoodProtected, log);
  try {
    await service.reload(plan.service);
    await service.restart(plan.service, signal);
    await service.waitHealthy(plan.service, plan.targetPath, signal);
  } catch (error) {
    throw await rollBack(plan, options, error);
  }
  log.info(
    { previous: plan.activePath, current: plan.targetPath, changed: plan.candidateChanged },
    'activated the host agent',
  );
  return {
    previous: plan.activePath,
    current: plan.targetPath,
    initialized: plan.initializeLayout,
    changed: plan.candidateChanged,
    repairedLastGood: plan.repairLastGood,
  };
}

/** The files this activation writes: blue when it keeps the active binary there, and the target. */
function writtenFiles(plan: ActivationPlan, layout: ActivationLayout): string[] {
  const written: string[] = [];
  if (plan.initializeLayout && plan.activePath !== layout.blue) written.push(layout.blue);
  if (plan.candidateChanged) written.push(plan.targetPath);
  return written;
}

/**
 * Never overwrite the binary the running service executes (it may differ
 * from what `current` names, when `current` moved without a restart): its
 * process would keep running a file no link names, and a rollback to it
 * would start something else.
 */
async function refuseRunningTarget(
  plan: ActivationPlan,
  options: ActivateInLayoutOptions,
): Promise<void> {
  const running = await options.service.runningExecutable(plan.service);
  if (running === undefined) return;
  for (const file of writtenFiles(plan, options.layout)) {
    if (((await resolveIfPresent(file)) ?? file) !== running) continue;
    throw new AgentError(
      'UPGRADE_REFUSED',
      `the agent service runs ${running}, which this activation would overwrite`,
      {
        path: file,
        hint: `restart the agent service so it runs what ${plan.currentLink} names, then retry`,
      },
    );
  }
}

/**
 * Keeps the active binary in blue when the layout is initialised (it is the
 * rollback target), then writes the candidate into the target slot and runs
 * it there. Returns whether last-good had to move first.
 */
async function installCandidate(
  plan: ActivationPlan,
  options: ActivateInLayoutOptions,
): Promise<boolean> {
  const { layout } = options;
  if (plan.initializeLayout && plan.activePath !== layout.blue) {
    await installFile(plan.activePath, layout.blue, { mode: 0o755 });
  }
  if (!plan.candidateChanged) return false;
  // If last-good names the slot about to be written, it moves to the rollback
  // path first, so the last-good binary is never the one being replaced.
  const lastGood = await resolveIfPresent(layout.lastGood);
  const target = (await resolveIfPresent(plan.targetPath)) ?? plan.targetPath;
  const isLastGoodProtected = lastGood === target;
  if (isLastGoodProtected) await replaceSymlinkAtomic(layout.lastGood, plan.rollbackPath);
  await installFile(options.snapshotPath, plan.targetPath, { mode: 0o755 });
  await options.verify(plan.targetPath);
  return isLastGoodProtected;
}

/**
 * Puts `current` back on the rollback path and restarts the service there,
 * on a fresh deadline: the caller's cancellation is what may have caused the
 * failure. Returns the error to throw, which says whether this worked.
 */
async function rollBack(
  plan: ActivationPlan,
  options: ActivateInLayoutOptions,
  cause: unknown,
): Promise<AgentError> {
  const { layout, service, log } = options;
  const what = `activate ${plan.targetPath}: ${messageOf(cause)}`;
  try {
    const signal = AbortSignal.timeout(rollbackTimeoutMs);
    await replaceSymlinkAtomic(layout.current, plan.rollbackPath);
    await service.restart(plan.service, signal);
    await service.waitHealthy(plan.service, plan.rollbackPath, signal);
  } catch (rollbackError) {
    log.error(
      { err: rollbackError, cause: messageOf(cause) },
      'rolling back the activation failed',
    );
    return new AgentError(
      'UPGRADE_FAILED',
      `${what}; rollback to ${plan.rollbackPath} failed too: ${messageOf(rollbackError)}`,
      {
        path: layout.current,
        cause: new AggregateError([cause, rollbackError]),
        hint: `${layout.current} names ${plan.rollbackPath} again; see why the service fails in its journal, then restart it`,
      },
    );
  }
  log.warn({ err: cause, current: plan.rollbackPath }, 'rolled the activation back');
  return new AgentError('UPGRADE_FAILED', `${what}; rolled back to ${plan.rollbackPath}`, {
    path: plan.targetPath,
    cause,
    hint: 'the previous binary runs again; see why the candidate failed in the agent journal',
  });
}
