/**
 * The API's routes, one table for both ends: the daemon registers each route
 * at its `url`, and the typed client builds its requests from the same entry,
 * so a path changes in one place.
 */
export const apiRoutes = {
  status: { method: 'GET', url: '/v1/status' },
  hostRoot: { method: 'GET', url: '/v1/host-root' },
  migrateHostRoot: { method: 'POST', url: '/v1/host-root/migrate' },
  beginAgentUpgrade: { method: 'POST', url: '/v1/agent-upgrades' },
  operation: { method: 'GET', url: '/v1/operations/:id' },
  cancelOperation: { method: 'DELETE', url: '/v1/operations/:id' },
  operationEvents: { method: 'GET', url: '/v1/operations/:id/events' },
  recover: { method: 'POST', url: '/v1/recovery' },
  beginReset: { method: 'POST', url: '/v1/reset' },
  regenerateNspawnHooks: { method: 'POST', url: '/v1/nspawn-machines/:machine/hooks' },
} as const;

/** One entry of {@link apiRoutes}. */
export type ApiRoute = (typeof apiRoutes)[keyof typeof apiRoutes];

/** A route's path with its `:name` parameters filled in, each URL-encoded. */
export function routePath(route: ApiRoute, params: Record<string, string> = {}): string {
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
