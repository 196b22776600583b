import { z } from 'zod';

/** What the service adapter found before a direct activation (spec agentbinary §3.6.3 Preflight). */
export const activationServicePlanSchema = z.strictObject({
  /** Whether the agent unit is installed at all; without it nothing is written, reloaded or restarted. */
  installed: z.boolean(),
  /** Whether the agent service ran; an inactive one is left stopped (the reset/reinstall case). */
  wasActive: z.boolean(),
  /** Whether an installed unit or script differs from what this release writes. */
  updateRequired: z.boolean(),
});
export type ActivationServicePlan = z.infer<typeof activationServicePlanSchema>;

/**
 * `agent-upgrade --candidate PATH --preflight --json`: what a direct
 * activation would do, computed without changing anything (spec §3.6.1).
 */
export const activationPlanSchema = z.strictObject({
  /** The candidate as the operator named it. */
  candidatePath: z.string(),
  /** The binary the layout runs now (resolved). */
  activePath: z.string(),
  /** The slot the candidate goes to; the active binary itself when nothing changes. */
  targetPath: z.string(),
  /** Where `current` goes back to if the activation fails; last-good names it afterwards. */
  rollbackPath: z.string(),
  currentLink: z.string(),
  lastGoodLink: z.string(),
  binaryPath: z.string().optional(),
  /** last-good's link text before the activation, when it is a link; restored if a switch fails. */
  lastGoodTarget: z.string().optional(),
  initializeLayout: z.boolean(),
  candidateChanged: z.boolean(),
  repairLastGood: z.boolean(),
  updateLastGood: z.boolean(),
  service: activationServicePlanSchema,
  /** One sentence per step, in order; the human output prints them as "- <action>". */
  actions: z.array(z.string()),
});
export type ActivationPlan = z.infer<typeof activationPlanSchema>;

/** `agent-upgrade --candidate PATH --json` when no daemon answered and the CLI activated locally. */
export const activationResultSchema = z.strictObject({
  previous: z.string(),
  current: z.string(),
  initialized: z.boolean(),
  changed: z.boolean(),
  repairedLastGood: z.boolean(),
});
export type ActivationResult = z.infer<typeof activationResultSchema>;
