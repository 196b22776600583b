import { AgentError } from '@aks-flex-node/log';
import { parseCommandArgs } from '../args.js';

/** Parses `host-root`'s flags; throws INVALID_ARGUMENT for `--migrate` with `--planned`. */
export function parseHostRootFlags(args: string[]) {
  const flags = parseCommandArgs('host-root', args, {
    planned: { type: 'boolean', default: false },
    resolved: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    migrate: { type: 'boolean', default: false },
  });
  if (flags.migrate && flags.planned) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      'host-root: --planned shows where the files would go and --migrate moves them; give one',
      { hint: 'run `aks-flex-node host-root --planned`, or `aks-flex-node host-root --migrate`' },
    );
  }
  return flags;
}
