import { nspawnMachines, type NspawnMachine } from '@aks-flex-node/layout';
import { AgentError } from '@aks-flex-node/log';

// Apart from the zod schemas so the nspawn hook, which runs at every machine
// start, checks the name without loading zod.

/**
 * The machine named on a command line or in a route, checked against the
 * machines the agent provisions before anything runs for it. The message is
 * the Go releases' (spec/daemon.md 6.3).
 *
 * Throws INVALID_ARGUMENT.
 */
export function parseNspawnMachine(name: string): NspawnMachine {
  const known = nspawnMachines.find((machine) => machine === name);
  if (known !== undefined) return known;
  throw new AgentError('INVALID_ARGUMENT', `unknown nspawn machine ${JSON.stringify(name)}`, {
    path: name,
    hint: `name one of the agent's nspawn machines: ${nspawnMachines.join(', ')}`,
  });
}
