import type { AgentError } from '@aks-flex-node/log';
import { httpStatusFor } from './error-table.js';
import type { Problem } from './problem.js';

/**
 * The problem body for an {@link AgentError}. Apart from the schema so the
 * lean clients (`status`) can write one without loading zod.
 */
export function problemFromError(error: AgentError): Problem {
  const problem: Problem = {
    type: `urn:aks-flex-node:error:${error.code}`,
    title: error.code,
    status: httpStatusFor(error.code),
    detail: error.message,
    code: error.code,
  };
  if (error.path !== undefined) problem.path = error.path;
  if (error.hint !== undefined) problem.hint = error.hint;
  return problem;
}
