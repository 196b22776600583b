import { z } from 'zod';
import { allErrorCodes, type AgentError } from '@aks-flex-node/log';
import { httpStatusFor } from './error-table.js';

/** The media type of every error body (RFC 9457). */
export const problemContentType = 'application/problem+json';

/** A stable error code, as problem bodies and operation records carry it. */
export const errorCodeSchema = z.enum(allErrorCodes);

/** An error body: RFC 9457 fields plus the stable code, the path and the operator's hint. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: errorCodeSchema,
  path: z.string().optional(),
  hint: z.string().optional(),
});
export type Problem = z.infer<typeof problemSchema>;

/** The problem body for an {@link AgentError}. */
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
