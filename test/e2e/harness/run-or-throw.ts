import type { MachineCommand, RunOptions } from './enter-machine.js';
import { describeCommand } from './enter-machine.js';
import type { Host } from './host.js';
import type { CommandResult } from './run-process.js';
import { formatCommandResult } from './run-process.js';

/** Runs a command in the host and throws, with its output, unless it exits 0. */
export async function runOrThrow(
  host: Host,
  command: MachineCommand,
  options?: RunOptions,
): Promise<CommandResult> {
  const result = await host.run(command, options);
  if (result.exitCode !== 0) {
    throw new Error(
      `run on ${host.name}\n${formatCommandResult(describeCommand(command), result)}`,
    );
  }
  return result;
}
