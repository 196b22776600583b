import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AgentError, messageOf } from '@aks-flex-node/log';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses a command's arguments strictly: an unknown flag or a stray argument
 * is a usage error naming it, not something silently ignored.
 */
export function parseCommandArgs<T extends Options>(command: string, args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new AgentError('INVALID_ARGUMENT', `${command}: ${messageOf(error)}`, {
      hint: `run \`aks-flex-node help\` for the commands and their flags`,
    });
  }
}

/** Like {@link parseCommandArgs}, for a command that also takes positional arguments (`operations ID`). */
export function parseCommandArgsWithPositionals<T extends Options>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    const { values, positionals } = parseArgs({
      args,
      options,
      strict: true,
      allowPositionals: true,
    });
    return { values, positionals };
  } catch (error) {
    throw new AgentError('INVALID_ARGUMENT', `${command}: ${messageOf(error)}`, {
      hint: `run \`aks-flex-node help\` for the commands and their flags`,
    });
  }
}
