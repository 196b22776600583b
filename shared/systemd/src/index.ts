export { createSystemctl } from './systemctl.js';
export type { Systemctl, SystemctlOptions } from './systemctl.js';
// The one subprocess runner lives in shared/fs; re-exported for systemctl's callers.
export { runBuiltin, runCommand, signalThatEndedCommand } from '@aks-flex-node/fs';
export type { CommandResult, CommandRunner } from '@aks-flex-node/fs';
