import { AgentError } from '@aks-flex-node/log';

/**
 * The API's JSON body parser. It says what is wrong with a body instead of
 * fastify's one "not valid JSON" for every case: empty, malformed, nested
 * absurdly deep, or carrying a `__proto__` or `constructor` key (refused everywhere, as a body
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
  checkShape(body);
  return body;
}

/** The API's bodies nest three levels; far deeper is an attack on the validators' stack. */
const maxDepth = 32;

/** Walks the body without recursion, so no nesting can exhaust the stack. */
function checkShape(body: unknown): void {
  const pending: { value: unknown; depth: number }[] = [{ value: body, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth >= maxDepth) {
      throw refusal(`the request body nests deeper than ${maxDepth} levels`);
    }
    for (const [key, child] of Object.entries(next.value)) {
      if (key === '__proto__' || key === 'constructor' || key === 'prototype') {
        throw refusal(`the request body has a ${key} key, which is never accepted`);
      }
      pending.push({ value: child, depth: next.depth + 1 });
    }
  }
}

function refusal(message: string): AgentError {
  return new AgentError('INVALID_ARGUMENT', message, {
    hint: 'send a JSON object with the documented fields (see docs/api.md)',
  });
}
