import { AgentError } from '@aks-flex-node/log';

/** The refusal for an operation id this daemon neither runs nor has a record of. */
export function operationNotFound(id: string): AgentError {
  return new AgentError('NOT_FOUND', `no operation ${id}`, {
    path: id,
    hint: 'operation records are kept for the last 20 operations; list them with `aks-flex-node operations`',
  });
}
