import type { ActivationPlan } from '@aks-flex-node/api';
import { removeIfExists, replaceSymlinkAtomic } from '@aks-flex-node/fs';
import { AgentError, messageOf, type Logger } from '@aks-flex-node/log';
import type { ActivationLayout } from './plan-activation.js';
import { isLinkTo } from '../resolve-link.js';

/**
 * Switches the links a plan names (spec agentbinary §3.6.2 step 9): last-good
 * first, so that from the moment `current` names the candidate the recovery
 * unit already rolls back to the right binary; then `current`; then the
 * plain binary becomes a link to `current`, so units and operators that run
 * it follow every later switch. The binary it replaced is already kept in
 * blue (the layout's initialisation copied it there).
 *
 * If a step fails, `current` goes back to the rollback path and last-good to
 * its previous link text (unless it was already moved to protect the slot
 * being written). Throws UPGRADE_FAILED with both errors when that fails too.
 */
export async function switchActivationLinks(
  plan: ActivationPlan,
  layout: ActivationLayout,
  isLastGoodProtected: boolean,
  log: Logger,
): Promise<void> {
  try {
    if (plan.updateLastGood) await replaceSymlinkAtomic(layout.lastGood, plan.rollbackPath);
    if (plan.initializeLayout || plan.candidateChanged) {
      await replaceSymlinkAtomic(layout.current, plan.targetPath);
    }
    if (layout.binary !== undefined && !(await isLinkTo(layout.binary, layout.current))) {
      await replaceSymlinkAtomic(layout.binary, layout.current);
    }
  } catch (error) {
    const restoreError = await restoreLinks(plan, layout, isLastGoodProtected);
    log.error(
      { err: error, restoreError: restoreError && messageOf(restoreError) },
      'switching the links of a direct activation failed',
    );
    const restored =
      restoreError === undefined
        ? `${layout.current} points at ${plan.rollbackPath} again`
        : `restoring the links failed too: ${messageOf(restoreError)}`;
    throw new AgentError(
      'UPGRADE_FAILED',
      `switch the agent links to ${plan.targetPath}: ${messageOf(error)}; ${restored}`,
      {
        path: layout.current,
        cause: restoreError === undefined ? error : new AggregateError([error, restoreError]),
        hint: `check ${layout.current} and ${layout.lastGood} with \`ls -l\`, then retry`,
      },
    );
  }
}

async function restoreLinks(
  plan: ActivationPlan,
  layout: ActivationLayout,
  isLastGoodProtected: boolean,
): Promise<unknown> {
  try {
    await replaceSymlinkAtomic(layout.current, plan.rollbackPath);
    if (isLastGoodProtected) return undefined;
    if (plan.lastGoodTarget === undefined) await removeIfExists(layout.lastGood);
    else await replaceSymlinkAtomic(layout.lastGood, plan.lastGoodTarget);
    return undefined;
  } catch (error) {
    return error;
  }
}
