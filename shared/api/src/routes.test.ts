import { describe, expect, it } from 'vitest';
import { apiRoutes, requestBodyLimitText, routePath } from './routes.js';

describe('the route table', () => {
  it('fills and encodes path parameters', () => {
    expect(routePath(apiRoutes.operationEvents, { id: 'op 1/2' })).toBe(
      '/v1/operations/op%201%2F2/events',
    );
    expect(routePath(apiRoutes.status)).toBe('/v1/status');
  });

  it('refuses a route whose parameter is missing', () => {
    expect(() => routePath(apiRoutes.operation)).toThrow('needs the parameter :id');
  });

  it('states the body limit as the docs do', () => {
    expect(requestBodyLimitText).toBe('64 KiB');
  });
});
