import { AgentError } from '@aks-flex-node/log';

/**
 * The API's JSON body parser. It says what is wrong with a body instead of
 * fastify's one "not valid JSON" for every case: empty, malformed, or
 * carrying a `__proto__` or `constructor` key (refused everywhere, as a body
 * never needs one and prototype poisoning does). Throws INVALID_ARGUMENT.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') {
    throw refusal('the request body is empty but its content-type is application/json');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw refusal(`the request body is not valid JSON: ${(error as Error).message}`);
  }
  const key = findForbiddenKey(body);
  if (key !== undefined) {
    throw refusal(`the request body has a ${key} key, which is never accepted`);
  }
  return body;
}

function findForbiddenKey(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, child] of Object.entries(value)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return key;
    const nested = findForbiddenKey(child);
    if (nested !== undefined) return nested;
  }
  return undefined;
}

function refusal(message: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', message, {
    hint: 'send a JSON object with the documented fields (see docs/api.md)',
  });
}
