import type {
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  FastifyTypeProvider,
} from 'fastify';
import { z } from 'zod';
import { AgentError } from '@aks-flex-node/log';

/**
 * Lets a route declare its body, params and responses as zod schemas
 * (fastify's Type-Providers): the handler's types come from the schemas, and
 * so do validation and serialization, through the two compilers below.
 */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

/**
 * Validates a request part with its route's schema. Unknown fields are
 * refused by the strict schemas, so a client that misspells a field learns it
 * instead of having it ignored. Fails with INVALID_ARGUMENT naming the fields;
 * an absent body is validated as `{}` (a `null` one is refused).
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, method, url, httpPart }) =>
  (data: unknown) => {
    // No body at all is an empty request; a JSON `null` is a body, and not an object.
    const parsed = schema.safeParse(data === undefined ? {} : data);
    if (parsed.success) return { value: parsed.data };
    const route = `${method} ${url}`;
    const part = httpPart === 'body' || httpPart === undefined ? 'body' : httpPart;
    return {
      error: new AgentError(
        'INVALID_ARGUMENT',
        `the request ${part} for ${route} is not valid: ${z.prettifyError(parsed.error)}`,
        {
          path: route,
          hint: 'send only the documented fields (see docs/api.md)',
        },
      ),
    };
  };

/**
 * Serializes a response with its route's schema: what leaves the daemon is
 * exactly what the typed client parses, and a handler that built something
 * else fails with a 500 instead of sending it.
 */
export const zodSerializerCompiler: FastifySerializerCompiler<z.ZodType> =
  ({ schema }) =>
  (data) =>
    JSON.stringify(schema.parse(data));
