import type { ActivationPlan } from '@aks-flex-node/api';

/**
 * The steps of a plan as sentences, in the order the activation runs them
 * (spec agentbinary §3.6.1 step 13). The service steps say what really
 * happens: an inactive service is left stopped, and a host without the unit
 * has nothing to reload.
 */
export function listActivationActions(plan: Omit<ActivationPlan, 'actions'>): string[] {
  const actions = ['verify candidate binary'];
  if (plan.initializeLayout) actions.push('initialize managed binary layout');
  if (plan.candidateChanged) {
    actions.push(
      `install candidate into ${plan.targetPath}`,
      `preserve ${plan.rollbackPath} as last-good`,
      `switch ${plan.currentLink} to ${plan.targetPath}`,
    );
  }
  if (plan.repairLastGood) actions.push('repair last-good agent symlink');
  if (plan.service.updateRequired) actions.push('update daemon service configuration');
  if (plan.service.installed) actions.push('reload daemon service manager');
  if (plan.service.wasActive) {
    actions.push('restart daemon service', 'wait for daemon health');
  } else {
    actions.push('leave daemon service stopped (it was not active)');
  }
  actions.push(`roll back to ${plan.rollbackPath} if activation fails`);
  return actions;
}
