import { preflightCandidate, createHost } from '@aks-flex-node/agentbinary';
import type { ActivationPlan } from '@aks-flex-node/api';
import { hostPaths } from '@aks-flex-node/layout';
import { createSilentLogger } from '@aks-flex-node/log';
import { printJson, printLine } from '../output.js';

/**
 * `agent-upgrade --candidate PATH --preflight [--json]`: prints what an
 * activation would do and changes nothing: no directory, link, lock file or
 * unit, and no migration of the host root.
 */
export async function runCandidatePreflight(candidate: string, json: boolean): Promise<number> {
  const log = createSilentLogger();
  const plan = await preflightCandidate({
    paths: hostPaths,
    candidatePath: candidate,
    host: createHost({ log }),
    log,
  });
  if (json) printJson(plan);
  else for (const line of describePlan(plan)) printLine(line);
  return 0;
}

/** The plan as an operator reads it: the three paths, one line per action, and the promise. */
export function describePlan(plan: ActivationPlan): string[] {
  return [
    `Candidate: ${plan.candidatePath}`,
    `Active binary: ${plan.activePath}`,
    `Install target: ${plan.targetPath}`,
    ...plan.actions.map((action) => `- ${action}`),
    'Preflight: no changes applied',
  ];
}
