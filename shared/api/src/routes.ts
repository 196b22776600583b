/**
 * The API's routes, one table for both ends: the daemon registers each route
 * at its `url`, and the client builds its requests from the same entry, so a
 * path changes in one place. `answer` names the route's success answer in
 * answerSchemas (answer-validators-source.ts): the zod schema the daemon
 * serializes with, and the client checks every answer against. It is a name,
 * not the schema, so a client that imports the table loads no zod.
 */
export const apiRoutes = {
  status: { method: 'GET', url: '/v1/status', answer: 'status' },
  hostRoot: { method: 'GET', url: '/v1/host-root', answer: 'hostRoot' },
  migrateHostRoot: { method: 'POST', url: '/v1/host-root/migrate', answer: 'migrate' },
  beginAgentUpgrade: { method: 'POST', url: '/v1/agent-upgrades', answer: 'operation' },
  operation: { method: 'GET', url: '/v1/operations/:id', answer: 'operation' },
  cancelOperation: { method: 'DELETE', url: '/v1/operations/:id', answer: 'operation' },
  // NDJSON: each line is an operation event.
  operationEvents: { method: 'GET', url: '/v1/operations/:id/events', answer: 'operationEvent' },
  recover: { method: 'POST', url: '/v1/recovery', answer: 'recovery' },
  beginReset: { method: 'POST', url: '/v1/reset', answer: 'operation' },
  regenerateNspawnHooks: {
    method: 'POST',
    url: '/v1/nspawn-machines/:machine/hooks',
    answer: 'nspawnHooks',
  },
} as const;

/** One entry of {@link apiRoutes}. */
export type ApiRoute = (typeof apiRoutes)[keyof typeof apiRoutes];

/** A route's path with its `:name` parameters filled in, each URL-encoded. */
export function routePath(route: { url: string }, params: Record<string, string> = {}): string {
  return route.url.replace(/:(\w+)/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`route ${route.url} needs the parameter ${whole}`);
    return encodeURIComponent(value);
  });
}

/** Request bodies are small JSON documents; archives arrive by URL, never inline. */
export const requestBodyLimitBytes = 64 * 1024;

/** The limit as the daemon's refusals and the docs state it. */
export const requestBodyLimitText = `${requestBodyLimitBytes / 1024} KiB`;
