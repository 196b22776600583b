/** Reset: the one sweep the daemon's `POST /v1/reset` and the offline `aks-flex-node reset` run. */
export { findKeptBinary } from './find-kept-binary.js';
export { resetAgent, resetPhases } from './reset-agent.js';
export type { ResetAgentOptions, ResetPhase, ResetReport } from './reset-agent.js';
export type { ResetEffects } from './reset-effects.js';
export { resetAgentUnderLock, resetThisHost } from './reset-under-lock.js';
export { resetTargets, resetUnits } from './reset-targets.js';
export { createSystemdResetEffects, isSystemdBooted } from './systemd-reset-effects.js';
