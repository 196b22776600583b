export { createSystemctl, runCommand, signalThatEndedCommand } from './run-command.js';
export type { CommandResult, CommandRunner, Systemctl } from './run-command.js';
export { createHost } from './host.js';
export type { Host } from './host.js';
