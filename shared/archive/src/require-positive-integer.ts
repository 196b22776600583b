import { AgentError } from '@aks-flex-node/log';

/** `value` when it is a positive safe integer; otherwise INVALID_ARGUMENT naming the option. */
export function requirePositiveInteger(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new AgentError('INVALID_ARGUMENT', `${name} must be a positive integer, got ${value}`, {
    path: name,
    hint: `omit ${name} for the default, or pass a whole number above zero`,
  });
}
