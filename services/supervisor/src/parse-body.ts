import { z } from 'zod';
import { AgentError } from '@aks-flex-node/log';

/**
 * Validates a request body with its route's schema. Unknown fields are
 * refused by the strict schemas, so a client that misspells a field learns it
 * instead of having it ignored. Throws INVALID_ARGUMENT naming the fields.
 */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, route: string): T {
  // No body at all is an empty request; a JSON `null` is a body, and not an object.
  const parsed = schema.safeParse(body === undefined ? {} : body);
  if (!parsed.success) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `the request body for ${route} is not valid: ${z.prettifyError(parsed.error)}`,
      {
        path: route,
        hint: 'send only the documented fields (see docs/api.md)',
      },
    );
  }
  return parsed.data;
}

/** Validates a route's path parameters, as {@link parseBody} does a body. Throws INVALID_ARGUMENT. */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown, route: string): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success) {
    throw new AgentError(
      'INVALID_ARGUMENT',
      `the path of ${route} is not valid: ${z.prettifyError(parsed.error)}`,
      { path: route, hint: 'name an operation by the id the daemon returned (see docs/api.md)' },
    );
  }
  return parsed.data;
}
