/** Reset: the one sweep the daemon's `POST /v1/reset` and the offline `aks-flex-node reset` run. */
export { describeResetReport } from './describe-reset.js';
export { findKeptBinary } from './find-kept-binary.js';
export { describeResetPhase, resetAgent, resetPhases } from './reset-agent.js';
export type { ResetAgentOptions, ResetPhase, ResetReport } from './reset-agent.js';
export type { ResetEffects } from './reset-effects.js';
export { createIpNetworkEffects } from './ip-network-effects.js';
export type { IpFamily, NetworkEffects, NetworkLink, NftRule } from './network-effects.js';
export { resetAgentUnderLock, resetThisHost } from './reset-under-lock.js';
export { resetTargets, resetUnits } from './reset-targets.js';
export {
  readUpgradeForReset,
  recoverBeforeResetCommand,
  refuseUnjudgedUpgrade,
  unjudgedUpgradeRefusal,
} from './unjudged-upgrade.js';
export type { UpgradeForReset } from './unjudged-upgrade.js';
export { createSystemdResetEffects, isSystemdBooted } from './systemd-reset-effects.js';
