// A stand-in for Azure Resource Manager's listBootstrapData action, on
// 127.0.0.1. ARM is a remote service that cannot be reached from the test
// machines (nor from the e2e hosts, which have a private network), so tests
// run this local server speaking the same protocol instead:
//
//   POST /subscriptions/S/resourceGroups/RG/providers/Microsoft.ContainerService
//        /managedClusters/C/agentPools/P/listBootstrapData?api-version=V
//   Authorization: Bearer <ARM access token>
//   -> 200 application/json, the pool's bootstrap data
//   -> 401/403/404/400/429/5xx {"error":{"code","message"}} as ARM answers
import {
  sendJson,
  startMockServer,
  type MockTokenService,
  type ReceivedRequest,
} from './token-services/mock-server.js';

/** How the mock ARM answers. */
export interface MockArmConfig {
  /** The managed cluster's resource ID the pool belongs to. */
  readonly clusterResourceId: string;
  readonly agentPoolName: string;
  /**
   * Which bearer tokens are valid (a regular expression): others get 401. The
   * local token services issue `imds.<client>.<n>`, `arc.<n>`, `entra.<client>.<n>`.
   */
  readonly validTokens: string;
  /** Which valid tokens hold a role on the cluster; others get 403. Default: all. */
  readonly authorizedTokens?: string;
  /** The api-version a request must name. Default 2026-05-02-preview. */
  readonly apiVersion?: string;
  /** The bootstrap data to answer with. */
  readonly response: unknown;
  /** A status every authorized request gets instead of the data (e.g. 503). */
  readonly alwaysFail?: number;
}

/** A running mock ARM. */
export interface MockArm extends MockTokenService {
  /** Each request's status, in order. */
  readonly answered: number[];
}

const defaultApiVersion = '2026-05-02-preview';

/** Starts the mock on 127.0.0.1 (plain http: AKS_FLEX_NODE_ALLOW_INSECURE_TEST_ENDPOINTS). */
export async function startMockArm(config: MockArmConfig): Promise<MockArm> {
  const answered: number[] = [];
  const server = await startMockServer((request, response) => {
    const status = statusFor(config, request);
    answered.push(status);
    if (status === 200) sendJson(response, 200, JSON.stringify(config.response));
    else sendJson(response, status, armError(status), status === 429 ? { 'retry-after': '7' } : {});
  });
  return { ...server, answered };
}

function statusFor(config: MockArmConfig, request: ReceivedRequest): number {
  const url = new URL(request.path, 'http://arm');
  const expected = `${config.clusterResourceId}/agentPools/${config.agentPoolName}/listBootstrapData`;
  if (request.method !== 'POST') return 405;
  if (url.pathname.toLowerCase() !== expected.toLowerCase()) return 404;
  const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1] ?? '';
  if (!new RegExp(config.validTokens).test(bearer)) return 401;
  if (!new RegExp(config.authorizedTokens ?? '').test(bearer)) return 403;
  if (config.alwaysFail !== undefined) return config.alwaysFail;
  if (url.searchParams.get('api-version') !== (config.apiVersion ?? defaultApiVersion)) return 400;
  return 200;
}

function armError(status: number): string {
  const codes: Record<number, [string, string]> = {
    400: ['InvalidApiVersionParameter', 'The api-version is not supported.'],
    401: ['InvalidAuthenticationToken', 'The access token is invalid.'],
    403: [
      'AuthorizationFailed',
      'The client does not have authorization to perform action listBootstrapData.',
    ],
    404: ['ResourceNotFound', 'The agent pool was not found.'],
    405: ['MethodNotAllowed', 'Only POST is allowed.'],
    429: ['TooManyRequests', 'Too many requests; retry later.'],
  };
  const [code, message] = codes[status] ?? ['InternalServerError', 'An internal error occurred.'];
  return JSON.stringify({ error: { code, message } });
}
